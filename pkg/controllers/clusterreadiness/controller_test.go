package clusterreadiness

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/readiness"
	"periscope.dev/periscope/pkg/store"
)

// fakeSource holds source objects by resource and namespace/name key.
type fakeSource map[schema.GroupResource]map[string]*unstructured.Unstructured

func (f fakeSource) Served(gr schema.GroupResource) string { return "v1" }
func (f fakeSource) HasSynced() bool                       { return true }
func (f fakeSource) List(gr schema.GroupResource) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range f[gr] {
		out = append(out, u)
	}
	return out
}
func (f fakeSource) GetByKey(gr schema.GroupResource, key string) (*unstructured.Unstructured, bool) {
	u, ok := f[gr][key]
	return u, ok
}
func (f fakeSource) ByIndex(gr schema.GroupResource, _, value string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range f[gr] {
		if keys, _ := summaryClusterKey(u); len(keys) == 1 && keys[0] == value {
			out = append(out, u)
		}
	}
	return out
}

func (f fakeSource) put(gr schema.GroupResource, u *unstructured.Unstructured) {
	if f[gr] == nil {
		f[gr] = map[string]*unstructured.Unstructured{}
	}
	key := u.GetName()
	if u.GetNamespace() != "" {
		key = u.GetNamespace() + "/" + u.GetName()
	}
	f[gr][key] = u
}

func obj(doc map[string]interface{}) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: doc}
}

func cluster(ns, name, env string) *unstructured.Unstructured {
	return obj(map[string]interface{}{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]interface{}{"namespace": ns, "name": name, "labels": map[string]interface{}{"env": env}},
		"status": map[string]interface{}{
			"initialization": map[string]interface{}{"controlPlaneInitialized": true},
			"conditions":     []interface{}{map[string]interface{}{"type": "Available", "status": "True"}},
		},
	})
}

func clusterProfile(name, env string) *unstructured.Unstructured {
	return obj(map[string]interface{}{
		"apiVersion": "config.projectsveltos.io/v1beta1", "kind": "ClusterProfile",
		"metadata": map[string]interface{}{"name": name},
		"spec": map[string]interface{}{
			"clusterSelector": map[string]interface{}{"matchLabels": map[string]interface{}{"env": env}},
			"helmCharts":      []interface{}{map[string]interface{}{"chartName": "x"}},
		},
	})
}

func clusterSummary(ns, cluster, profile, status string) *unstructured.Unstructured {
	return obj(map[string]interface{}{
		"apiVersion": "config.projectsveltos.io/v1beta1", "kind": "ClusterSummary",
		"metadata": map[string]interface{}{"namespace": ns, "name": profile + "-capi-" + cluster, "labels": map[string]interface{}{
			"projectsveltos.io/cluster-name": cluster, "projectsveltos.io/cluster-type": "Capi", "projectsveltos.io/cluster-profile-name": profile,
		}},
		"status": map[string]interface{}{"featureSummaries": []interface{}{map[string]interface{}{"featureID": "Helm", "status": status}}},
	})
}

// drain processes the queue and returns the keys computed, sorted.
func drain(t *testing.T, c *Controller) []string {
	t.Helper()
	var keys []string
	for c.queue.Len() > 0 {
		key, _ := c.queue.Get()
		keys = append(keys, key)
		if err := c.sync(context.Background(), key); err != nil {
			t.Fatalf("sync %s: %v", key, err)
		}
		c.queue.Done(key)
	}
	sort.Strings(keys)
	return keys
}

func newTestController(src fakeSource) *Controller {
	s := store.New(store.Config{Resource: v1alpha1.Resource("clusterreadinesses"), NewFunc: func() runtime.Object { return &v1alpha1.ClusterReadiness{} }})
	c := New(s, nil)
	c.SetSource(src)
	return c
}

func readyOf(t *testing.T, c *Controller, ns, name string) string {
	t.Helper()
	o, ok := c.store.Get(ns, name)
	if !ok {
		return "absent"
	}
	cr := o.(*v1alpha1.ClusterReadiness)
	return fmt.Sprintf("ready=%v addons=%d/%d", cr.Status.Ready, cr.Status.Addons.Deployed, cr.Status.Addons.Total)
}

func TestIncrementalRecomputation(t *testing.T) {
	src := fakeSource{}
	src.put(CAPIClusters, cluster("a", "c1", "prod"))
	src.put(CAPIClusters, cluster("a", "c2", "dev"))
	src.put(CAPIClusters, cluster("b", "c3", "prod"))
	src.put(ClusterProfiles, clusterProfile("p-prod", "prod"))
	src.put(ClusterProfiles, clusterProfile("p-dev", "dev"))
	src.put(ClusterSummaries, clusterSummary("a", "c1", "p-prod", "Provisioned"))
	src.put(ClusterSummaries, clusterSummary("b", "c3", "p-prod", "Provisioning"))
	c := newTestController(src)

	c.Resync()
	if diff := cmp.Diff([]string{"a/c1", "a/c2", "b/c3"}, drain(t, c)); diff != "" {
		t.Fatalf("initial computation (-want +got):\n%s", diff)
	}
	for key, want := range map[string]string{"a/c1": "ready=true addons=1/1", "a/c2": "ready=false addons=0/1", "b/c3": "ready=false addons=0/1"} {
		ns, name, _ := splitKey(key)
		if got := readyOf(t, c, ns, name); got != want {
			t.Errorf("%s: %s, want %s", key, got, want)
		}
	}

	steps := []struct {
		name         string
		change       func()
		wantComputed []string
		wantChanged  bool
	}{
		{
			name: "a summary change recomputes only its cluster",
			change: func() {
				old := src[ClusterSummaries]["b/c3"]
				cur := clusterSummary("b", "c3", "p-prod", "Provisioned")
				src.put(ClusterSummaries, cur)
				c.onSummary(old, cur)
			},
			wantComputed: []string{"b/c3"},
			wantChanged:  true,
		},
		{
			name: "a summary update with an equal result recomputes its cluster but emits nothing",
			change: func() {
				old := src[ClusterSummaries]["a/c1"]
				cur := clusterSummary("a", "c1", "p-prod", "Provisioned")
				cur.SetAnnotations(map[string]string{"touched": "yes"})
				src.put(ClusterSummaries, cur)
				c.onSummary(old, cur)
			},
			wantComputed: []string{"a/c1"},
			wantChanged:  false,
		},
		{
			name: "a profile change recomputes the clusters it matched before and matches now",
			change: func() {
				old := src[ClusterProfiles]["p-dev"]
				cur := clusterProfile("p-dev", "prod") // p-dev now selects prod clusters
				src.put(ClusterProfiles, cur)
				c.onProfile(old, cur)
			},
			wantComputed: []string{"a/c1", "a/c2", "b/c3"},
			wantChanged:  true,
		},
		{
			name: "a profile that matches nothing before or after recomputes nothing",
			change: func() {
				cur := clusterProfile("p-none", "nowhere")
				src.put(ClusterProfiles, cur)
				c.onProfile(nil, cur)
			},
			wantComputed: nil,
		},
		{
			name: "a cluster's label change re-evaluates which profiles match it, and only it",
			change: func() {
				old := src[CAPIClusters]["a/c2"]
				cur := cluster("a", "c2", "retired")
				src.put(CAPIClusters, cur)
				c.onCluster(old, cur)
			},
			wantComputed: []string{"a/c2"},
			wantChanged:  true,
		},
		{
			name: "a deleted cluster's object is removed",
			change: func() {
				old := src[CAPIClusters]["b/c3"]
				delete(src[CAPIClusters], "b/c3")
				c.onCluster(old, nil)
			},
			wantComputed: []string{"b/c3"},
			wantChanged:  true,
		},
	}
	for _, step := range steps {
		rvBefore := c.store.ResourceVersion()
		before := c.Computations()
		step.change()
		computed := drain(t, c)
		if diff := cmp.Diff(step.wantComputed, computed); diff != "" {
			t.Errorf("%s: computed keys (-want +got):\n%s", step.name, diff)
		}
		if changed := c.store.ResourceVersion() != rvBefore; changed != step.wantChanged {
			t.Errorf("%s: store changed = %v, want %v", step.name, changed, step.wantChanged)
		}
		if n := c.Computations() - before; n > int64(len(step.wantComputed)) {
			t.Errorf("%s: %d computations for %d clusters", step.name, n, len(step.wantComputed))
		}
	}
	if got := readyOf(t, c, "a", "c2"); got != "ready=true addons=0/0" {
		t.Errorf("a/c2 after leaving every profile: %s", got)
	}
	if got := readyOf(t, c, "b", "c3"); got != "absent" {
		t.Errorf("b/c3 after its cluster was deleted: %s", got)
	}
}

func TestCAPIClusterWinsOverASveltosClusterOfTheSameName(t *testing.T) {
	src := fakeSource{}
	src.put(CAPIClusters, cluster("a", "c1", "prod"))
	src.put(SveltosClusters, obj(map[string]interface{}{
		"apiVersion": "lib.projectsveltos.io/v1beta1", "kind": "SveltosCluster",
		"metadata": map[string]interface{}{"namespace": "a", "name": "c1"},
		"status":   map[string]interface{}{"ready": false},
	}))
	c := newTestController(src)
	c.Resync()
	drain(t, c)
	o, ok := c.store.Get("a", "c1")
	if !ok {
		t.Fatal("a/c1 not computed")
	}
	if got := o.(*v1alpha1.ClusterReadiness).Status.ClusterType; got != v1alpha1.ClusterTypeCapi {
		t.Errorf("cluster type %s, want Capi", got)
	}
	if n := len(c.store.Keys()); n != 1 {
		t.Errorf("%d objects, want 1", n)
	}
}

func splitKey(key string) (string, string, error) {
	for i := range key {
		if key[i] == '/' {
			return key[:i], key[i+1:], nil
		}
	}
	return "", key, nil
}

// fakeChecker answers every cluster with its verdict and records what it was asked with.
type fakeChecker struct {
	verdict   map[string]v1alpha1.CheckResult
	askedWith map[string][]string // condition types of the base readiness
	forgotten []string
}

func (f *fakeChecker) Checks(cluster readiness.Cluster, base []metav1.Condition) []v1alpha1.CheckResult {
	var types []string
	for _, c := range base {
		types = append(types, c.Type)
	}
	f.askedWith[cluster.Key()] = types
	if r, ok := f.verdict[cluster.Key()]; ok {
		return []v1alpha1.CheckResult{r}
	}
	return nil
}
func (f *fakeChecker) Forget(key string) { f.forgotten = append(f.forgotten, key) }

func TestChecksGateReadyAndAreAskedWithTheBaseReadiness(t *testing.T) {
	src := fakeSource{}
	src.put(CAPIClusters, cluster("team-a", "prod-1", "prod"))
	src.put(CAPIClusters, cluster("team-a", "prod-2", "prod"))
	c := newTestController(src)
	checker := &fakeChecker{askedWith: map[string][]string{}, verdict: map[string]v1alpha1.CheckResult{
		"team-a/prod-1": {Extension: "approvals", Handler: "approved", Reason: readiness.CheckReasonPending},
		"team-a/prod-2": {Extension: "approvals", Handler: "approved", Ready: true, Reason: "Passed"},
	}}
	c.SetChecker(checker, func() bool { return true })
	c.Resync()
	drain(t, c)

	if diff := cmp.Diff(map[string][]string{
		"team-a/prod-1": {"ClusterAvailable", "AddonsDeployed"},
		"team-a/prod-2": {"ClusterAvailable", "AddonsDeployed"},
	}, checker.askedWith); diff != "" {
		t.Errorf("checks asked with (-want +got):\n%s", diff)
	}
	if got := readyOf(t, c, "team-a", "prod-1"); got != "ready=false addons=0/0" {
		t.Errorf("prod-1 with a pending check: %s", got)
	}
	if got := readyOf(t, c, "team-a", "prod-2"); got != "ready=true addons=0/0" {
		t.Errorf("prod-2 with a passed check: %s", got)
	}

	// An answer arrives: the evaluator enqueues the cluster, which is recomputed alone.
	checker.verdict["team-a/prod-1"] = v1alpha1.CheckResult{Extension: "approvals", Handler: "approved", Ready: true, Reason: "Passed"}
	before := c.Computations()
	c.Enqueue("team-a/prod-1")
	if diff := cmp.Diff([]string{"team-a/prod-1"}, drain(t, c)); diff != "" {
		t.Errorf("recomputed (-want +got):\n%s", diff)
	}
	if got := readyOf(t, c, "team-a", "prod-1"); got != "ready=true addons=0/0" || c.Computations() != before+1 {
		t.Errorf("prod-1 after the answer: %s, %d computations", got, c.Computations()-before)
	}

	// A namespace's labels change: only its clusters are recomputed.
	src.put(CAPIClusters, cluster("team-b", "dev-1", "dev"))
	drain(t, c)
	c.Resync()
	drain(t, c)
	c.EnqueueNamespace("team-b")
	if diff := cmp.Diff([]string{"team-b/dev-1"}, drain(t, c)); diff != "" {
		t.Errorf("recomputed for team-b (-want +got):\n%s", diff)
	}

	// A deleted cluster's checks are forgotten.
	delete(src[CAPIClusters], "team-a/prod-2")
	c.Enqueue("team-a/prod-2")
	drain(t, c)
	if diff := cmp.Diff([]string{"team-a/prod-2"}, checker.forgotten); diff != "" {
		t.Errorf("forgotten (-want +got):\n%s", diff)
	}
}
