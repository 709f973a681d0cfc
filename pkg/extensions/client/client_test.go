package client

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"periscope.dev/periscope/internal/testcerts"
	"periscope.dev/periscope/pkg/extension"
)

// tlsServer serves f over TLS and returns a client that trusts it.
func tlsServer(t *testing.T, f http.HandlerFunc) *Client {
	t.Helper()
	ts := httptest.NewTLSServer(f)
	t.Cleanup(ts.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	c, err := New(Target{BaseURL: ts.URL + "/base", CABundle: ca})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// otherCA is a CA that signed nothing the test servers use (httptest servers share one
// certificate, so a second server would not do).
func otherCA(t *testing.T) []byte {
	t.Helper()
	ca, err := testcerts.NewCA("other-ca")
	if err != nil {
		t.Fatal(err)
	}
	return ca.CertPEM
}

func answer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) }
}

const v = `"apiVersion":"hooks.visibility.periscope.dev/v1alpha1"`

func TestCheck(t *testing.T) {
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		timeout    time.Duration
		want       Answer
		wantReason string
		wantErr    string
	}{
		{name: "ready", handler: answer(`{` + v + `,"status":"Success","ready":true,"message":"ok","retryAfterSeconds":5}`),
			want: Answer{Ready: true, Message: "ok", RetryAfter: 5 * time.Second}},
		{name: "not ready", handler: answer(`{` + v + `,"status":"Success","ready":false,"message":"waiting for approval"}`),
			want: Answer{Message: "waiting for approval"}},
		{name: "explicit Failure is never ready", handler: answer(`{` + v + `,"status":"Failure","ready":true,"message":"db down"}`),
			want: Answer{Failure: true, Message: "db down"}},
		{name: "retryAfter capped", handler: answer(`{` + v + `,"status":"Success","ready":true,"retryAfterSeconds":999999}`),
			want: Answer{Ready: true, RetryAfter: MaxRetryAfter}},
		{name: "negative retryAfter", handler: answer(`{` + v + `,"status":"Success","retryAfterSeconds":-1}`), wantReason: ReasonInvalidResponse, wantErr: "negative"},
		{name: "unknown status", handler: answer(`{` + v + `,"status":"Maybe"}`), wantReason: ReasonInvalidResponse, wantErr: `"Maybe"`},
		{name: "wrong apiVersion", handler: answer(`{"apiVersion":"v1","status":"Success"}`), wantReason: ReasonInvalidResponse, wantErr: "apiVersion"},
		{name: "invalid JSON", handler: answer(`{"status":`), wantReason: ReasonInvalidResponse, wantErr: "decoding"},
		{name: "huge body", handler: answer(`{` + v + `,"message":"` + strings.Repeat("x", MaxCheckResponseBytes) + `"}`), wantReason: ReasonInvalidResponse, wantErr: "larger than"},
		{name: "non-200", handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) },
			wantReason: ReasonHTTPError, wantErr: "500 Internal Server Error: boom"},
		{name: "redirect is not followed", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.example/", http.StatusFound)
		},
			wantReason: ReasonHTTPError, wantErr: "302"},
		{name: "slow answer times out", timeout: 100 * time.Millisecond,
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(5 * time.Second):
				case <-r.Context().Done():
				}
			},
			wantReason: ReasonTimeout, wantErr: "no answer within 100ms"},
		{name: "trickling body times out", timeout: 200 * time.Millisecond,
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"status":`))
				w.(http.Flusher).Flush()
				select {
				case <-time.After(5 * time.Second):
				case <-r.Context().Done():
				}
			},
			wantReason: ReasonTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type seen struct {
				path string
				req  extension.ClusterReadinessCheckRequest
			}
			requests := make(chan seen, 1)
			c := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
				var s seen
				s.path = r.URL.Path
				_ = json.NewDecoder(r.Body).Decode(&s.req)
				requests <- s
				tt.handler(w, r)
			})
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			got, err := c.Check(context.Background(), Handler{Name: "approved", Timeout: timeout},
				&extension.ClusterReadinessCheckRequest{Cluster: extension.ClusterInfo{Name: "prod-1"}, Settings: map[string]string{"a": "b"}})
			got1 := <-requests
			gotPath, gotReq := got1.path, got1.req
			if gotPath != "/base/hooks.visibility.periscope.dev/v1alpha1/clusterreadinesscheck/approved" {
				t.Errorf("path = %q", gotPath)
			}
			if gotReq.Kind != extension.KindClusterReadinessCheckRequest || gotReq.Cluster.Name != "prod-1" || gotReq.Settings["a"] != "b" {
				t.Errorf("request = %+v", gotReq)
			}
			if tt.wantReason != "" {
				var ce *CallError
				if !errors.As(err, &ce) || ce.Reason != tt.wantReason || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want reason %s containing %q", err, tt.wantReason, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTransportErrors(t *testing.T) {
	// A server whose certificate is not in the bundle.
	ts := httptest.NewTLSServer(answer(`{}`))
	t.Cleanup(ts.Close)
	wrongCA := otherCA(t)
	rightCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})

	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + l.Addr().String()
	_ = l.Close()

	for _, tt := range []struct {
		name   string
		target Target
		reason string
	}{
		{"unknown authority", Target{BaseURL: ts.URL, CABundle: wrongCA}, ReasonTLSError},
		{"wrong server name", Target{BaseURL: ts.URL, CABundle: rightCA, ServerName: "other.periscope-system.svc"}, ReasonTLSError},
		{"nothing listening", Target{BaseURL: closed, CABundle: rightCA}, ReasonUnreachable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Discover(context.Background(), 2*time.Second)
			var ce *CallError
			if !errors.As(err, &ce) || ce.Reason != tt.reason {
				t.Fatalf("error = %v, want reason %s", err, tt.reason)
			}
		})
	}
	if _, err := New(Target{BaseURL: ts.URL, CABundle: []byte("not pem")}); err == nil {
		t.Error("New accepted a bundle without certificates")
	}
}

func TestDiscover(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    []Handler
		wantErr string
	}{
		{
			name: "defaults and explicit values; other hooks left out",
			body: `{` + v + `,"status":"Success","handlers":[
				{"name":"approved","requestHook":{` + v + `,"hook":"ClusterReadinessCheck"}},
				{"name":"scan","requestHook":{` + v + `,"hook":"ClusterReadinessCheck"},"timeoutSeconds":3,"failurePolicy":"Ignore"},
				{"name":"future","requestHook":{"apiVersion":"hooks.visibility.periscope.dev/v1beta1","hook":"ClusterReadinessCheck"}},
				{"name":"other","requestHook":{` + v + `,"hook":"BeforeClusterDelete"}}]}`,
			want: []Handler{
				{Name: "approved", Timeout: 10 * time.Second, FailurePolicy: extension.FailurePolicyFail},
				{Name: "scan", Timeout: 3 * time.Second, FailurePolicy: extension.FailurePolicyIgnore},
			},
		},
		{name: "timeout above 30", body: `{` + v + `,"status":"Success","handlers":[{"name":"a","requestHook":{` + v + `,"hook":"ClusterReadinessCheck"},"timeoutSeconds":31}]}`, wantErr: "timeoutSeconds 31"},
		{name: "bad failure policy", body: `{` + v + `,"status":"Success","handlers":[{"name":"a","requestHook":{` + v + `,"hook":"ClusterReadinessCheck"},"failurePolicy":"Retry"}]}`, wantErr: `failurePolicy "Retry"`},
		{name: "duplicate", body: `{` + v + `,"status":"Success","handlers":[{"name":"a","requestHook":{` + v + `,"hook":"ClusterReadinessCheck"}},{"name":"a","requestHook":{` + v + `,"hook":"ClusterReadinessCheck"}}]}`, wantErr: "twice"},
		{name: "bad name", body: `{` + v + `,"status":"Success","handlers":[{"name":"A/B","requestHook":{` + v + `,"hook":"ClusterReadinessCheck"}}]}`, wantErr: "DNS label"},
		{name: "status Failure", body: `{` + v + `,"status":"Failure","message":"not configured"}`, wantErr: "not configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotPath string
			c := tlsServer(t, func(w http.ResponseWriter, r *http.Request) { gotPath = r.URL.Path; _, _ = w.Write([]byte(tt.body)) })
			got, err := c.Discover(context.Background(), 5*time.Second)
			if gotPath != "/base/hooks.visibility.periscope.dev/v1alpha1/discovery" {
				t.Errorf("path = %q", gotPath)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("handlers (-want +got):\n%s", diff)
			}
		})
	}
}
