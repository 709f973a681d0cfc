// Package readinessextension serves ReadinessExtension objects from the store.
package readinessextension

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/clock"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/registry/readonly"
	"periscope.dev/periscope/pkg/store"
)

// Resource is the resource served.
var Resource = v1alpha1.Resource("readinessextensions")

// NewStore returns the store that holds ReadinessExtension objects.
func NewStore(cfg store.Config) *store.Store {
	cfg.Resource = Resource
	cfg.NewFunc = func() runtime.Object { return &v1alpha1.ReadinessExtension{} }
	return store.New(cfg)
}

// NewREST returns the read-only REST storage of readinessextensions.
func NewREST(s *store.Store, ready func() error, clk clock.PassiveClock) *readonly.REST {
	return readonly.New(readonly.Config{
		Store:           s,
		Resource:        Resource,
		SingularName:    "readinessextension",
		Categories:      []string{"periscope"},
		NamespaceScoped: false,
		NewFunc:         func() runtime.Object { return &v1alpha1.ReadinessExtension{} },
		NewListFunc:     func() runtime.Object { return &v1alpha1.ReadinessExtensionList{} },
		AttrFunc:        storage.DefaultClusterScopedAttr,
		TableConvertor:  Table(clk),
		Ready:           ready,
	})
}

// Table is how kubectl shows ReadinessExtensions: at a glance, which one is broken and why.
func Table(clk clock.PassiveClock) readonly.TableConvertor {
	return readonly.TableConvertor{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
			{Name: "Ready", Type: "string", Description: "The Ready condition: valid, discovered, every handler healthy."},
			{Name: "Handlers", Type: "string", Description: "Healthy handlers / discovered handlers."},
			{Name: "Reason", Type: "string", Description: "The Ready condition's reason."},
			{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
			{Name: "Endpoint", Type: "string", Priority: 1, Description: "Where the extension is called."},
			{Name: "Message", Type: "string", Priority: 1, Description: "The Ready condition's message."},
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			e, ok := obj.(*v1alpha1.ReadinessExtension)
			if !ok {
				return nil, fmt.Errorf("expected a ReadinessExtension, got %T", obj)
			}
			healthy := 0
			for _, h := range e.Status.Handlers {
				if h.Health == v1alpha1.HandlerHealthy {
					healthy++
				}
			}
			ready, reason, message := "Unknown", "", ""
			if cond := meta.FindStatusCondition(e.Status.Conditions, "Ready"); cond != nil {
				ready, reason, message = string(cond.Status), cond.Reason, cond.Message
			}
			return []interface{}{
				e.Name, ready,
				fmt.Sprintf("%d/%d", healthy, len(e.Status.Handlers)),
				reason,
				readonly.Age(clk, e.CreationTimestamp),
				e.Spec.Endpoint,
				strings.TrimSpace(message),
			}, nil
		},
	}
}
