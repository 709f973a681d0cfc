// Package benchdata turns the benchmark's generated fleet (test/bench/fixtures) into the inputs
// of Periscope's readiness computation and into computed ClusterReadiness objects, so that the
// micro-benchmarks in pkg/ run on the same realistic data as the end-to-end benchmark.
package benchdata

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/readiness"
	"periscope.dev/periscope/test/bench/fixtures"
)

// created is the creation time of every object: as if the fleet had been created at once.
var created = metav1.NewTime(time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC))

// Fleet is a generated fleet as the computation sees it.
type Fleet struct {
	Profiles []readiness.Profile
	Clusters []readiness.Cluster
	// Summaries holds each cluster's summaries, by cluster index.
	Summaries [][]readiness.Summary
}

// New extracts a fleet of n clusters (seed 1), as Periscope's informers would hand it over.
func New(n int) (*Fleet, error) {
	g, err := fixtures.New(fixtures.DefaultConfig(n))
	if err != nil {
		return nil, fmt.Errorf("generate the fleet: %w", err)
	}
	f := &Fleet{}
	for _, o := range g.ClusterProfiles() {
		f.Profiles = append(f.Profiles, readiness.ProfileFromUnstructured(Stored(o)))
	}
	for i := 0; i < n; i++ {
		c := g.Cluster(i)
		u := Stored(c.Object)
		if c.Type == fixtures.TypeCapi {
			f.Clusters = append(f.Clusters, readiness.ClusterFromCAPI(u))
		} else {
			f.Clusters = append(f.Clusters, readiness.ClusterFromSveltos(u))
		}
		var sums []readiness.Summary
		for _, s := range c.Summaries {
			sums = append(sums, readiness.SummaryFromUnstructured(Stored(s)))
		}
		f.Summaries = append(f.Summaries, sums)
	}
	return f, nil
}

// Stored returns the object as kube-apiserver would serve it: with its status, a uid and a
// creation timestamp.
func Stored(o fixtures.Object) *unstructured.Unstructured {
	u := o.Object.DeepCopy()
	if o.Status != nil {
		u.Object["status"] = o.Status
	}
	key := u.GetNamespace() + "/" + u.GetName()
	u.SetUID(types.UID(uuid.NewSHA1(uuid.NameSpaceURL, []byte(key)).String()))
	u.SetCreationTimestamp(created)
	return u
}

// Input is what the controller hands the computation for cluster i.
func (f *Fleet) Input(i int) readiness.Input {
	return readiness.Input{Cluster: f.Clusters[i], Profiles: f.Profiles, Summaries: f.Summaries[i]}
}

// Object computes cluster i and builds its ClusterReadiness as the controller does.
func (f *Fleet) Object(i int) *v1alpha1.ClusterReadiness {
	c := f.Clusters[i]
	return &v1alpha1.ClusterReadiness{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "ClusterReadiness"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: c.Namespace, Name: c.Name, Labels: c.Labels, UID: c.UID, CreationTimestamp: c.Created,
		},
		Status: readiness.Compute(f.Input(i)).Status,
	}
}

// Objects computes every cluster.
func (f *Fleet) Objects() []*v1alpha1.ClusterReadiness {
	out := make([]*v1alpha1.ClusterReadiness, len(f.Clusters))
	for i := range f.Clusters {
		out[i] = f.Object(i)
	}
	return out
}
