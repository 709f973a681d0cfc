package registration

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"periscope.dev/periscope/internal/testcerts"
)

func testCA(t *testing.T) []byte {
	t.Helper()
	ca, err := testcerts.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	return ca.CertPEM
}

func TestFromConfigMap(t *testing.T) {
	ca := testCA(t)
	caB64 := base64.StdEncoding.EncodeToString(ca)
	port := int32(8443)
	tests := []struct {
		name     string
		data     map[string]string
		want     ClientConfig
		settings map[string]string
		nsSel    string
		clSel    string
		wantErrs []string
	}{
		{
			name: "service with every field",
			data: map[string]string{
				KeyClientConfig:      "service: {namespace: periscope-system, name: approvals, port: 8443, path: /x}\ncaBundle: " + caB64,
				KeyNamespaceSelector: "matchLabels: {tenant: a}",
				KeyClusterSelector:   "matchExpressions: [{key: env, operator: In, values: [prod]}]",
				KeySettings:          "configMapName: approvals\nretryAfterSeconds: \"5\"",
			},
			want:     ClientConfig{Service: &ServiceReference{Namespace: "periscope-system", Name: "approvals", Port: &port, Path: "/x"}, CABundle: ca},
			settings: map[string]string{"configMapName": "approvals", "retryAfterSeconds": "5"},
			nsSel:    "tenant=a", clSel: "env in (prod)",
		},
		{
			name:  "url only: selectors match everything",
			data:  map[string]string{KeyClientConfig: "url: https://checks.example.com/base"},
			want:  ClientConfig{URL: "https://checks.example.com/base"},
			nsSel: "", clSel: "",
		},
		{name: "no clientConfig", data: map[string]string{}, wantErrs: []string{"clientConfig is required"}},
		{name: "both url and service", data: map[string]string{KeyClientConfig: "url: https://a\nservice: {namespace: a, name: b}"}, wantErrs: []string{"not both"}},
		{name: "http url", data: map[string]string{KeyClientConfig: "url: http://a.example.com"}, wantErrs: []string{"scheme must be https"}},
		{name: "url with query", data: map[string]string{KeyClientConfig: "url: https://a.example.com/?x=1"}, wantErrs: []string{"query or fragment"}},
		{name: "url with user", data: map[string]string{KeyClientConfig: "url: https://u:p@a.example.com/"}, wantErrs: []string{"user information"}},
		{name: "bad service", data: map[string]string{KeyClientConfig: "service: {namespace: Bad_NS, name: '', port: 70000, path: x}"},
			wantErrs: []string{"service.namespace", "service.name", "service.port", "path must start with /"}},
		{name: "typo in clientConfig", data: map[string]string{KeyClientConfig: "urll: https://a"}, wantErrs: []string{`unknown field "urll"`}},
		{name: "garbage caBundle", data: map[string]string{KeyClientConfig: "url: https://a\ncaBundle: " + base64.StdEncoding.EncodeToString([]byte("nope"))}, wantErrs: []string{"no PEM certificate"}},
		{name: "bad selector", data: map[string]string{KeyClientConfig: "url: https://a", KeyClusterSelector: "matchExpressions: [{key: env, operator: Near}]"}, wantErrs: []string{"clusterSelector"}},
		{name: "settings not strings", data: map[string]string{KeyClientConfig: "url: https://a", KeySettings: "a: [1, 2]"}, wantErrs: []string{"settings must be a map of strings"}},
		{name: "unknown key", data: map[string]string{KeyClientConfig: "url: https://a", "clustrSelector": "{}"}, wantErrs: []string{`unknown key "clustrSelector"`}},
		{name: "unparsable yaml", data: map[string]string{KeyClientConfig: ":\n  - ["}, wantErrs: []string{"clientConfig:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ext", UID: "u1", ResourceVersion: "7"}, Data: tt.data}
			got, err := FromConfigMap(cm)
			if len(tt.wantErrs) > 0 {
				if err == nil {
					t.Fatalf("no error, want %q", tt.wantErrs)
				}
				for _, want := range tt.wantErrs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.ClientConfig); diff != "" {
				t.Errorf("clientConfig (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.settings, got.Settings); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			if got.NamespaceSelector.String() != tt.nsSel || got.ClusterSelector.String() != tt.clSel {
				t.Errorf("selectors = %q, %q; want %q, %q", got.NamespaceSelector, got.ClusterSelector, tt.nsSel, tt.clSel)
			}
			if got.Name != "ext" || got.UID != "u1" || got.ResourceVersion != "7" {
				t.Errorf("identity not copied: %+v", got)
			}
			if !got.ClusterSelector.Matches(labels.Set{"env": "prod"}) {
				t.Errorf("cluster selector %q does not match env=prod", got.ClusterSelector)
			}
		})
	}
}

func TestBaseURL(t *testing.T) {
	resolve := func(ns, name string, port int32) (string, error) {
		return "localhost:" + string(rune('0'+port%10)), nil
	}
	base, serverName, err := ClientConfig{Service: &ServiceReference{Namespace: "ns", Name: "svc", Path: "/p/"}}.BaseURL(resolve)
	if err != nil || base != "https://localhost:3/p" || serverName != "svc.ns.svc" {
		t.Errorf("service: %q %q %v", base, serverName, err)
	}
	base, serverName, err = ClientConfig{URL: "https://a.example.com/x/"}.BaseURL(resolve)
	if err != nil || base != "https://a.example.com/x" || serverName != "" {
		t.Errorf("url: %q %q %v", base, serverName, err)
	}
}
