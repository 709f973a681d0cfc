package readiness

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
)

func parse(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]interface{}
	if err := json.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("bad test document %s: %v", doc, err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func TestClusterAvailability(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		sv   bool
		want Availability
	}{
		{name: "v1beta2 available",
			doc:  `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c"},"status":{"initialization":{"controlPlaneInitialized":true},"conditions":[{"type":"Available","status":"True"}]}}`,
			want: Availability{Available: true, Message: "the Cluster's Available condition is True"}},
		{name: "v1beta2 control plane not initialized",
			doc:  `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c"},"status":{"initialization":{"controlPlaneInitialized":false},"conditions":[{"type":"Available","status":"True"}]}}`,
			want: Availability{Reason: ReasonControlPlaneNotInitialized, Message: "the cluster's control plane is not initialized"}},
		{name: "v1beta2 Available False",
			doc:  `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c"},"status":{"initialization":{"controlPlaneInitialized":true},"conditions":[{"type":"Available","status":"False","reason":"NotAvailable","message":"3 of 3 workers unhealthy"}]}}`,
			want: Availability{Reason: ReasonNotAvailable, Message: "Available is False (NotAvailable): 3 of 3 workers unhealthy"}},
		{name: "v1beta2 no Available condition yet",
			doc:  `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c"},"status":{"initialization":{"controlPlaneInitialized":true}}}`,
			want: Availability{Reason: ReasonNotAvailable, Message: "the Cluster reports no Available condition yet"}},
		{name: "v1beta1 ready",
			doc:  `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c"},"status":{"infrastructureReady":true,"controlPlaneReady":true,"conditions":[{"type":"Ready","status":"True"}]}}`,
			want: Availability{Available: true, Message: "infrastructure and control plane are ready"}},
		{name: "v1beta1 infrastructure not ready",
			doc:  `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c"},"status":{"controlPlaneReady":true}}`,
			want: Availability{Reason: ReasonInfrastructureNotReady, Message: "the cluster's infrastructure is not ready"}},
		{name: "v1beta1 control plane not ready",
			doc:  `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c"},"status":{"infrastructureReady":true}}`,
			want: Availability{Reason: ReasonControlPlaneNotReady, Message: "the cluster's control plane is not ready"}},
		{name: "v1beta1 Ready False",
			doc:  `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c"},"status":{"infrastructureReady":true,"controlPlaneReady":true,"conditions":[{"type":"Ready","status":"False","reason":"MachinesNotReady"}]}}`,
			want: Availability{Reason: ReasonNotReady, Message: "Ready is False (MachinesNotReady)"}},
		{name: "a cluster being deleted",
			doc:  `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","deletionTimestamp":"2026-01-01T00:00:00Z"},"status":{"initialization":{"controlPlaneInitialized":true},"conditions":[{"type":"Available","status":"True"}]}}`,
			want: Availability{Reason: ReasonDeleting, Message: "the Cluster is being deleted"}},
		{name: "a field of the wrong type",
			doc:  `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c"},"status":{"initialization":{"controlPlaneInitialized":"yes"}}}`,
			want: Availability{Reason: ReasonInvalidSource, Message: "Cluster c: status.initialization.controlPlaneInitialized: expected a boolean, got a string"}},
		{name: "SveltosCluster ready", sv: true,
			doc:  `{"apiVersion":"lib.projectsveltos.io/v1beta1","kind":"SveltosCluster","metadata":{"name":"s"},"status":{"ready":true,"connectionStatus":"Healthy"}}`,
			want: Availability{Available: true, Message: "the SveltosCluster is ready and connected"}},
		{name: "SveltosCluster connection down", sv: true,
			doc:  `{"apiVersion":"lib.projectsveltos.io/v1beta1","kind":"SveltosCluster","metadata":{"name":"s"},"status":{"ready":true,"connectionStatus":"Down","failureMessage":"i/o timeout"}}`,
			want: Availability{Reason: ReasonConnectionDown, Message: "Sveltos cannot reach the cluster: i/o timeout"}},
		{name: "SveltosCluster not ready", sv: true,
			doc:  `{"apiVersion":"lib.projectsveltos.io/v1beta1","kind":"SveltosCluster","metadata":{"name":"s"},"status":{}}`,
			want: Availability{Reason: ReasonNotReady, Message: "the SveltosCluster is not ready"}},
		{name: "SveltosCluster with a wrong type", sv: true,
			doc:  `{"apiVersion":"lib.projectsveltos.io/v1beta1","kind":"SveltosCluster","metadata":{"name":"s"},"status":{"ready":"true"}}`,
			want: Availability{Reason: ReasonInvalidSource, Message: "SveltosCluster s: status.ready: expected a boolean, got a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Cluster
			if tt.sv {
				got = ClusterFromSveltos(parse(t, tt.doc))
			} else {
				got = ClusterFromCAPI(parse(t, tt.doc))
			}
			if diff := cmp.Diff(tt.want, got.Availability); diff != "" {
				t.Errorf("availability (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummaryFromUnstructured(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want Summary
	}{
		{
			name: "a ClusterProfile's summary",
			doc: `{"metadata":{"namespace":"a","name":"s","labels":{"projectsveltos.io/cluster-name":"c","projectsveltos.io/cluster-type":"Capi","projectsveltos.io/cluster-profile-name":"p"}},
				"status":{"featureSummaries":[{"featureID":"Helm","status":"Failed","failureMessage":"x"}],"helmReleaseSummaries":[{"releaseNamespace":"m","releaseName":"r","status":"Conflict","conflictMessage":"y"}],"failureMessage":"z"}}`,
			want: Summary{Namespace: "a", Name: "s", ClusterName: "c", ClusterType: v1alpha1.ClusterTypeCapi, ProfileKind: KindClusterProfile, ProfileName: "p",
				Features: []v1alpha1.FeatureStatus{{FeatureID: "Helm", Status: "Failed", FailureMessage: "x"}}, HelmReleases: []HelmRelease{{Namespace: "m", Name: "r", Conflict: true, ConflictMessage: "y"}},
				FailureMessage: "z"},
		},
		{
			name: "a Profile's summary",
			doc:  `{"metadata":{"namespace":"a","name":"s","labels":{"projectsveltos.io/cluster-name":"c","projectsveltos.io/cluster-type":"Sveltos","projectsveltos.io/profile-name":"p"}}}`,
			want: Summary{Namespace: "a", Name: "s", ClusterName: "c", ClusterType: v1alpha1.ClusterTypeSveltos, ProfileKind: KindProfile, ProfileName: "p"},
		},
		{
			name: "unknown strings and wrong types are named, the rest is kept",
			doc: `{"metadata":{"namespace":"a","name":"s","labels":{"projectsveltos.io/cluster-name":"c","projectsveltos.io/cluster-type":"Kind","projectsveltos.io/cluster-profile-name":"p"}},
				"status":{"featureSummaries":[{"featureID":"Helm","status":"Exploded"},{"featureID":"Resources","status":"Provisioned"},7],"helmReleaseSummaries":{"a":1},"failureMessage":3}}`,
			want: Summary{Namespace: "a", Name: "s", ClusterName: "c", ClusterType: "Kind", ProfileKind: KindClusterProfile, ProfileName: "p",
				Features: []v1alpha1.FeatureStatus{{FeatureID: "Resources", Status: "Provisioned"}},
				Invalid:  `label projectsveltos.io/cluster-type is "Kind", not Capi or Sveltos; status.featureSummaries[0].status: unknown status "Exploded"; status.featureSummaries[2]: expected an object; status.helmReleaseSummaries: expected a list, got an object; status.failureMessage: expected a string, got a number`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SummaryFromUnstructured(parse(t, tt.doc))
			got.LastWrite = tt.want.LastWrite
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzExtract feeds arbitrary JSON to every extractor and to Compute: errors are reported in
// the result, never by panicking.
func FuzzExtract(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","labels":{"env":"prod"}},"status":{"initialization":{"controlPlaneInitialized":true},"conditions":[{"type":"Available","status":"True"}]}}`,
		`{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c"},"status":{"conditions":[1,{"type":2}]}}`,
		`{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterSelector":{"matchExpressions":[{"key":"env","operator":"Bogus","values":[1]}]},"clusterRefs":[5,{"kind":7}],"helmCharts":{}}}`,
		`{"metadata":{"labels":{"projectsveltos.io/cluster-name":"c"}},"status":{"featureSummaries":[{"featureID":[],"status":{}}],"helmReleaseSummaries":[null]}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var obj map[string]interface{}
		if err := json.Unmarshal([]byte(doc), &obj); err != nil {
			return
		}
		u := &unstructured.Unstructured{Object: obj}
		in := Input{
			Cluster:   ClusterFromCAPI(u),
			Profiles:  []Profile{ProfileFromUnstructured(u)},
			Summaries: []Summary{SummaryFromUnstructured(u)},
		}
		_ = ClusterFromSveltos(u)
		status := Compute(in).Status
		if len(status.Conditions) != 4 {
			t.Fatalf("%d conditions, want 4", len(status.Conditions))
		}
	})
}
