package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"periscope.dev/periscope/pkg/extension"
)

func configMap(namespace, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
}

func fakeLister(t *testing.T, objs ...*corev1.ConfigMap) corelisters.ConfigMapLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		if err := indexer.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewConfigMapLister(indexer)
}

func TestCheckApproval(t *testing.T) {
	prod := extension.ClusterInfo{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Namespace: "team-a", Name: "prod-1"}
	lister := fakeLister(t,
		configMap("team-a", "readiness-approvals", map[string]string{"prod-1": "approved", "prod-2": "pending", "prod-3": "Approved"}),
		configMap("team-a", "custom", map[string]string{"prod-1": "approved"}),
		configMap("team-b", "readiness-approvals", map[string]string{"prod-1": "approved"}),
		configMap("team-c", "readiness-approvals", nil),
	)
	named := func(namespace, name string) extension.ClusterInfo {
		c := prod
		c.Namespace, c.Name = namespace, name
		return c
	}
	tests := []struct {
		name     string
		cluster  extension.ClusterInfo
		settings map[string]string
		want     extension.Result
		wantErr  string
	}{
		{
			name:    "approved, default settings",
			cluster: prod,
			want:    extension.Result{Ready: true, Message: "approved by ConfigMap team-a/readiness-approvals", RetryAfter: 30 * time.Second},
		},
		{
			name:    "another value is not an approval",
			cluster: named("team-a", "prod-2"),
			want:    extension.Result{Message: `ConfigMap team-a/readiness-approvals has data["prod-2"] = "pending", want "approved"`, RetryAfter: 30 * time.Second},
		},
		{
			name:    "the value is case-sensitive",
			cluster: named("team-a", "prod-3"),
			want:    extension.Result{Message: `ConfigMap team-a/readiness-approvals has data["prod-3"] = "Approved", want "approved"`, RetryAfter: 30 * time.Second},
		},
		{
			name:    "no entry for the cluster",
			cluster: named("team-a", "prod-9"),
			want:    extension.Result{Message: `ConfigMap team-a/readiness-approvals has no entry for cluster prod-9: set data["prod-9"] to "approved"`, RetryAfter: 30 * time.Second},
		},
		{
			name:    "a ConfigMap without data",
			cluster: named("team-c", "prod-1"),
			want:    extension.Result{Message: `ConfigMap team-c/readiness-approvals has no entry for cluster prod-1: set data["prod-1"] to "approved"`, RetryAfter: 30 * time.Second},
		},
		{
			name:    "only the cluster's own namespace counts",
			cluster: named("team-d", "prod-1"),
			want:    extension.Result{Message: "ConfigMap team-d/readiness-approvals does not exist", RetryAfter: 30 * time.Second},
		},
		{
			name:     "configMapName and retryAfterSeconds from the settings",
			cluster:  prod,
			settings: map[string]string{"configMapName": "custom", "retryAfterSeconds": "5"},
			want:     extension.Result{Ready: true, Message: "approved by ConfigMap team-a/custom", RetryAfter: 5 * time.Second},
		},
		{
			name:     "a named ConfigMap that does not exist",
			cluster:  named("team-b", "prod-1"),
			settings: map[string]string{"configMapName": "custom"},
			want:     extension.Result{Message: "ConfigMap team-b/custom does not exist", RetryAfter: 30 * time.Second},
		},
		{
			name:     "empty settings take the defaults",
			cluster:  prod,
			settings: map[string]string{"configMapName": "", "retryAfterSeconds": " "},
			want:     extension.Result{Ready: true, Message: "approved by ConfigMap team-a/readiness-approvals", RetryAfter: 30 * time.Second},
		},
		{
			name:     "retryAfterSeconds 0 leaves it to Periscope",
			cluster:  prod,
			settings: map[string]string{"retryAfterSeconds": "0"},
			want:     extension.Result{Ready: true, Message: "approved by ConfigMap team-a/readiness-approvals"},
		},
		{
			name:     "bad retryAfterSeconds",
			cluster:  prod,
			settings: map[string]string{"retryAfterSeconds": "30s"},
			wantErr:  `settings.retryAfterSeconds "30s" is not a number of seconds between 0 and 86400`,
		},
		{
			name:     "negative retryAfterSeconds",
			cluster:  prod,
			settings: map[string]string{"retryAfterSeconds": "-1"},
			wantErr:  `settings.retryAfterSeconds "-1" is not a number of seconds between 0 and 86400`,
		},
		{
			name:     "bad configMapName",
			cluster:  prod,
			settings: map[string]string{"configMapName": "Not A Name"},
			wantErr:  `settings.configMapName "Not A Name" is not a ConfigMap name`,
		},
		{
			name:    "no cluster",
			cluster: extension.ClusterInfo{},
			wantErr: `the request names no cluster`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkApproval(lister, tt.cluster, tt.settings)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServedThroughTheProtocol checks the wiring: the answer Periscope reads for a request.
func TestServedThroughTheProtocol(t *testing.T) {
	lister := fakeLister(t, configMap("team-a", "readiness-approvals", map[string]string{"prod-1": "approved"}))
	srv, err := extension.NewServer(extension.HandlerSpec{Name: HandlerName, Check: func(_ context.Context, req *extension.ClusterReadinessCheckRequest) (extension.Result, error) {
		return checkApproval(lister, req.Cluster, req.Settings)
	}})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"cluster":{"apiVersion":"lib.projectsveltos.io/v1beta1","kind":"SveltosCluster","namespace":"team-a","name":"prod-1"},"settings":{"retryAfterSeconds":"10"}}`
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, extension.ClusterReadinessCheckPathPrefix+HandlerName, strings.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("code = %d: %s", rec.Code, rec.Body)
	}
	var got extension.ClusterReadinessCheckResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := extension.ClusterReadinessCheckResponse{
		TypeMeta: extension.TypeMeta{APIVersion: extension.APIVersion, Kind: extension.KindClusterReadinessCheckResponse},
		Status:   extension.ResponseStatusSuccess, Ready: true, Message: "approved by ConfigMap team-a/readiness-approvals", RetryAfterSeconds: 10,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

func TestTrimConfigMap(t *testing.T) {
	in := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "b", Labels: map[string]string{"l": "v"},
			Annotations:   map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Data:       map[string]string{"prod-1": "approved"},
		BinaryData: map[string][]byte{"blob": make([]byte, 1024)},
	}
	got, err := trimConfigMap(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "b", Labels: map[string]string{"l": "v"}}, Data: map[string]string{"prod-1": "approved"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed (-want +got):\n%s", diff)
	}
}
