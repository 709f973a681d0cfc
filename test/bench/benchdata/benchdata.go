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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	controller "periscope.dev/periscope/pkg/controllers/clusterreadiness"
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
		u, err := Cached(o)
		if err != nil {
			return nil, err
		}
		f.Profiles = append(f.Profiles, readiness.ProfileFromUnstructured(u))
	}
	for i := 0; i < n; i++ {
		c := g.Cluster(i)
		u, err := Cached(c.Object)
		if err != nil {
			return nil, err
		}
		if c.Type == fixtures.TypeCapi {
			f.Clusters = append(f.Clusters, readiness.ClusterFromCAPI(u))
		} else {
			f.Clusters = append(f.Clusters, readiness.ClusterFromSveltos(u))
		}
		var sums []readiness.Summary
		for _, s := range c.Summaries {
			u, err := Cached(s)
			if err != nil {
				return nil, err
			}
			sums = append(sums, readiness.SummaryFromUnstructured(u))
		}
		f.Summaries = append(f.Summaries, sums)
	}
	return f, nil
}

// Stored returns the object as kube-apiserver would serve it: with its status, a uid, a
// creation timestamp, and the managedFields of its create and of its status write.
func Stored(o fixtures.Object) *unstructured.Unstructured {
	u := o.Object.DeepCopy()
	if o.Status != nil {
		u.Object["status"] = o.Status
	}
	key := u.GetNamespace() + "/" + u.GetName()
	u.SetUID(types.UID(uuid.NewSHA1(uuid.NameSpaceURL, []byte(key)).String()))
	u.SetCreationTimestamp(created)
	u.SetResourceVersion("123456")
	u.SetGeneration(1)
	written := metav1.NewTime(created.Add(time.Minute))
	fields := func(raw string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(raw)} }
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "sveltos-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: u.GetAPIVersion(), Time: &created,
			FieldsType: "FieldsV1", FieldsV1: fields(`{"f:metadata":{"f:labels":{}},"f:spec":{}}`)},
		{Manager: "sveltos-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: u.GetAPIVersion(), Time: &written,
			FieldsType: "FieldsV1", FieldsV1: fields(`{"f:status":{}}`), Subresource: "status"},
	})
	return u
}

// transforms are the informer transforms of Periscope's ClusterReadiness controller, by
// resource: what its cache keeps of each source object.
var transforms = func() map[schema.GroupResource]cache.TransformFunc {
	out := map[schema.GroupResource]cache.TransformFunc{}
	for _, r := range controller.New(nil, nil).SourceResources() {
		out[schema.GroupResource{Group: r.Group, Resource: r.Resource}] = r.Transform
	}
	return out
}()

// Cached returns the object as Periscope's informer cache holds it: Stored, then trimmed by the
// controller's transform.
func Cached(o fixtures.Object) (*unstructured.Unstructured, error) {
	u := Stored(o)
	t := transforms[o.Resource.GroupResource()]
	if t == nil {
		return u, nil
	}
	out, err := t(u)
	if err != nil {
		return nil, fmt.Errorf("transform %s: %w", u.GetName(), err)
	}
	cached, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("transform %s returned %T", u.GetName(), out)
	}
	return cached, nil
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
