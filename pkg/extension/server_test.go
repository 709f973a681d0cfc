package extension

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func testServer(t *testing.T) *Server {
	t.Helper()
	s, err := NewServer(
		HandlerSpec{Name: "approved", TimeoutSeconds: 5, FailurePolicy: FailurePolicyIgnore,
			Check: func(_ context.Context, req *ClusterReadinessCheckRequest) (Result, error) {
				if req.Settings["fail"] == "true" {
					return Result{}, errors.New("backend down")
				}
				return Result{Ready: req.Cluster.Labels["approved"] == "yes", Message: "checked " + req.Cluster.Name, RetryAfter: 1500 * time.Millisecond}, nil
			}},
		HandlerSpec{Name: "always", Check: func(context.Context, *ClusterReadinessCheckRequest) (Result, error) { return Result{Ready: true}, nil }},
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestServerRoutes(t *testing.T) {
	five, ignore := int32(5), FailurePolicyIgnore
	tests := []struct {
		name, method, path, body string
		wantCode                 int
		want                     any
		decodeInto               any
	}{
		{
			name: "discovery", method: http.MethodPost, path: "/base" + DiscoveryPath, body: `{}`, wantCode: 200,
			decodeInto: &DiscoveryResponse{},
			want: &DiscoveryResponse{TypeMeta: TypeMeta{APIVersion: APIVersion, Kind: KindDiscoveryResponse}, Status: ResponseStatusSuccess,
				Handlers: []Handler{
					{Name: "approved", RequestHook: RequestHook{APIVersion: APIVersion, Hook: HookClusterReadinessCheck}, TimeoutSeconds: &five, FailurePolicy: &ignore},
					{Name: "always", RequestHook: RequestHook{APIVersion: APIVersion, Hook: HookClusterReadinessCheck}},
				}},
		},
		{
			name: "check ready", method: http.MethodPost, path: ClusterReadinessCheckPathPrefix + "approved", wantCode: 200,
			body:       `{"cluster":{"name":"prod-1","labels":{"approved":"yes"}}}`,
			decodeInto: &ClusterReadinessCheckResponse{},
			want: &ClusterReadinessCheckResponse{TypeMeta: TypeMeta{APIVersion: APIVersion, Kind: KindClusterReadinessCheckResponse},
				Status: ResponseStatusSuccess, Ready: true, Message: "checked prod-1", RetryAfterSeconds: 2},
		},
		{
			name: "check error answers Failure", method: http.MethodPost, path: ClusterReadinessCheckPathPrefix + "approved", wantCode: 200,
			body:       `{"cluster":{"name":"prod-1"},"settings":{"fail":"true"}}`,
			decodeInto: &ClusterReadinessCheckResponse{},
			want: &ClusterReadinessCheckResponse{TypeMeta: TypeMeta{APIVersion: APIVersion, Kind: KindClusterReadinessCheckResponse},
				Status: ResponseStatusFailure, Message: "backend down"},
		},
		{name: "unknown handler", method: http.MethodPost, path: ClusterReadinessCheckPathPrefix + "nope", body: `{}`, wantCode: 404},
		{name: "unknown path", method: http.MethodPost, path: "/elsewhere", body: `{}`, wantCode: 404},
		{name: "GET", method: http.MethodGet, path: "/base" + DiscoveryPath, wantCode: 405},
		{name: "garbled body", method: http.MethodPost, path: ClusterReadinessCheckPathPrefix + "always", body: `{`, wantCode: 400},
		{name: "huge body", method: http.MethodPost, path: ClusterReadinessCheckPathPrefix + "always", body: `"` + strings.Repeat("x", MaxRequestBytes) + `"`, wantCode: 413},
	}
	s := testServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
			if rec.Code != tt.wantCode {
				t.Fatalf("code = %d, want %d: %s", rec.Code, tt.wantCode, rec.Body)
			}
			if tt.decodeInto == nil {
				return
			}
			if err := json.Unmarshal(rec.Body.Bytes(), tt.decodeInto); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, tt.decodeInto); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewServerRejectsBadHandlers(t *testing.T) {
	check := func(context.Context, *ClusterReadinessCheckRequest) (Result, error) { return Result{}, nil }
	for name, specs := range map[string][]HandlerSpec{
		"none":           nil,
		"bad name":       {{Name: "Not_A_Label", Check: check}},
		"duplicate":      {{Name: "a", Check: check}, {Name: "a", Check: check}},
		"timeout":        {{Name: "a", TimeoutSeconds: 31, Check: check}},
		"failure policy": {{Name: "a", FailurePolicy: "Sometimes", Check: check}},
		"no check":       {{Name: "a"}},
	} {
		if _, err := NewServer(specs...); err == nil {
			t.Errorf("%s: NewServer accepted %+v", name, specs)
		}
	}
}
