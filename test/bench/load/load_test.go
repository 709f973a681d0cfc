package load

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"periscope.dev/periscope/test/bench/fixtures"
)

func TestLoad(t *testing.T) {
	ctx := context.Background()
	g, err := fixtures.New(fixtures.DefaultConfig(2))
	if err != nil {
		t.Fatal(err)
	}
	var objs []fixtures.Object
	for i := 0; i < 2; i++ {
		c := g.Cluster(i)
		objs = append(objs, c.Object)
		objs = append(objs, c.Summaries...)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		fixtures.CAPIClusters: "ClusterList", fixtures.SveltosClusters: "SveltosClusterList", fixtures.ClusterSummaries: "ClusterSummaryList",
	})
	// One object exists already, without its status: it is kept and gets its status.
	existing := objs[1].Object.DeepCopy()
	if _, err := client.Resource(objs[1].Resource).Namespace(existing.GetNamespace()).Create(ctx, existing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	stats, err := Loader{Client: client, Workers: 4}.Load(ctx, slices.Values(objs))
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(objs))
	// Every object: a create and a status write; the existing one: a get too.
	want := Stats{Created: n - 1, Existing: 1, Requests: 2*n + 1}
	stats.Seconds = 0
	if diff := cmp.Diff(want, stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	for _, o := range objs {
		got, err := client.Resource(o.Resource).Namespace(o.Object.GetNamespace()).Get(ctx, o.Object.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(o.Status, got.Object["status"]); diff != "" {
			t.Errorf("status of %s (-want +got):\n%s", o.Object.GetName(), diff)
		}
	}
}
