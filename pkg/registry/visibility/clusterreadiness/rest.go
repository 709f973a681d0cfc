// Package clusterreadiness serves ClusterReadiness objects from the store.
package clusterreadiness

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/clock"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/registry/readonly"
	"periscope.dev/periscope/pkg/store"
)

// Resource is the resource served.
var Resource = v1alpha1.Resource("clusterreadinesses")

// FieldLabels are the field selectors ClusterReadiness supports.
var FieldLabels = []string{"metadata.name", "metadata.namespace", "status.ready"}

// NewStore returns the store that holds ClusterReadiness objects.
func NewStore(cfg store.Config) *store.Store {
	cfg.Resource = Resource
	cfg.NewFunc = func() runtime.Object { return &v1alpha1.ClusterReadiness{} }
	return store.New(cfg)
}

// NewREST returns the read-only REST storage of clusterreadinesses.
func NewREST(s *store.Store, ready func() error, clk clock.PassiveClock) *readonly.REST {
	return readonly.New(readonly.Config{
		Store:           s,
		Resource:        Resource,
		SingularName:    "clusterreadiness",
		Categories:      []string{"periscope"},
		NamespaceScoped: true,
		NewFunc:         func() runtime.Object { return &v1alpha1.ClusterReadiness{} },
		NewListFunc:     func() runtime.Object { return &v1alpha1.ClusterReadinessList{} },
		AttrFunc:        Attrs,
		TableConvertor:  Table(clk),
		WrapList:        wrapList,
		Ready:           ready,
	})
}

// cachedList is a ClusterReadinessList that the API server's JSON encoder writes from each
// object's cached encoding (readonly.CachedList); everything else sees the typed list.
type cachedList struct {
	*v1alpha1.ClusterReadinessList
	readonly.CachedList
}

func wrapList(list runtime.Object, cached readonly.CachedList) runtime.Object {
	l := list.(*v1alpha1.ClusterReadinessList)
	l.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "ClusterReadinessList"}
	return &cachedList{ClusterReadinessList: l, CachedList: cached}
}

// Attrs returns the labels and the selectable fields of a ClusterReadiness.
func Attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	c, ok := obj.(*v1alpha1.ClusterReadiness)
	if !ok {
		return nil, nil, fmt.Errorf("expected a ClusterReadiness, got %T", obj)
	}
	return labels.Set(c.Labels), fields.Set{
		"metadata.name":      c.Name,
		"metadata.namespace": c.Namespace,
		"status.ready":       strconv.FormatBool(c.Status.Ready),
	}, nil
}

// Table is how kubectl shows ClusterReadiness objects (kubectl adds NAMESPACE with -A).
func Table(clk clock.PassiveClock) readonly.TableConvertor {
	return readonly.TableConvertor{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: "The cluster's name."},
			{Name: "Type", Type: "string", Description: "Capi or Sveltos."},
			{Name: "Ready", Type: "string", Description: "The Ready condition."},
			{Name: "Addons", Type: "string", Description: "Deployed add-on profiles / matching profiles."},
			{Name: "Reason", Type: "string", Description: "The reason of the Ready condition."},
			{Name: "Age", Type: "string", Description: "Age of the cluster object."},
			{Name: "Checks", Type: "string", Priority: 1, Description: "Passed extension checks / applicable checks."},
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			c, ok := obj.(*v1alpha1.ClusterReadiness)
			if !ok {
				return nil, fmt.Errorf("expected a ClusterReadiness, got %T", obj)
			}
			ready, reason := "Unknown", ""
			if cond := meta.FindStatusCondition(c.Status.Conditions, "Ready"); cond != nil {
				ready, reason = string(cond.Status), cond.Reason
			}
			age := readonly.Age(clk, c.CreationTimestamp)
			passed := 0
			for _, check := range c.Status.Checks {
				if check.Ready {
					passed++
				}
			}
			return []interface{}{
				c.Name, string(c.Status.ClusterType), ready,
				fmt.Sprintf("%d/%d", c.Status.Addons.Deployed, c.Status.Addons.Total),
				reason, age,
				fmt.Sprintf("%d/%d", passed, len(c.Status.Checks)),
			}, nil
		},
	}
}

var _ storage.AttrFunc = Attrs
