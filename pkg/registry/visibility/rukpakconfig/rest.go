// Package rukpakconfig serves RukPakConfig objects from the store.
package rukpakconfig

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/registry/readonly"
	"periscope.dev/periscope/pkg/store"
)

// Resource is the resource served.
var Resource = v1alpha1.Resource("rukpakconfigs")

// NewStore returns the store that holds RukPakConfig objects.
func NewStore(cfg store.Config) *store.Store {
	cfg.Resource = Resource
	cfg.NewFunc = func() runtime.Object { return &v1alpha1.RukPakConfig{} }
	return store.New(cfg)
}

// NewREST returns the read-only REST storage of rukpakconfigs.
func NewREST(s *store.Store, ready func() error) *readonly.REST {
	return readonly.New(readonly.Config{
		Store:           s,
		Resource:        Resource,
		SingularName:    "rukpakconfig",
		Categories:      []string{"periscope"},
		NamespaceScoped: false,
		NewFunc:         func() runtime.Object { return &v1alpha1.RukPakConfig{} },
		NewListFunc:     func() runtime.Object { return &v1alpha1.RukPakConfigList{} },
		AttrFunc:        storage.DefaultClusterScopedAttr,
		TableConvertor:  Table,
		Ready:           ready,
	})
}

// Table is how kubectl shows RukPakConfigs.
var Table = readonly.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Installed", Type: "boolean", Description: "Whether the rukpak API is served."},
		{Name: "Provisioners", Type: "string", Description: "Running provisioners / all provisioners."},
		{Name: "Classes", Type: "integer", Description: "Provisioner classes served or referenced."},
		{Name: "Missing", Type: "integer", Description: "Classes that bundles name but no provisioner serves."},
		{Name: "Available", Type: "string", Description: "The Available condition."},
		{Name: "Class Names", Type: "string", Priority: 1, Description: "The classes, with the state of each when it is not Available."},
	},
	Cells: func(obj runtime.Object) ([]interface{}, error) {
		c, ok := obj.(*v1alpha1.RukPakConfig)
		if !ok {
			return nil, fmt.Errorf("expected a RukPakConfig, got %T", obj)
		}
		running, missing := 0, 0
		for _, p := range c.Status.Provisioners {
			if p.State == v1alpha1.ProvisionerRunning {
				running++
			}
		}
		names := make([]string, 0, len(c.Status.Classes))
		for _, cl := range c.Status.Classes {
			if cl.State == v1alpha1.ClassMissing {
				missing++
			}
			if cl.State == v1alpha1.ClassAvailable {
				names = append(names, cl.Name)
			} else {
				names = append(names, fmt.Sprintf("%s(%s)", cl.Name, cl.State))
			}
		}
		available := "Unknown"
		if cond := meta.FindStatusCondition(c.Status.Conditions, "Available"); cond != nil {
			available = string(cond.Status)
		}
		return []interface{}{
			c.Name,
			c.Status.Installed,
			fmt.Sprintf("%d/%d", running, len(c.Status.Provisioners)),
			int64(len(c.Status.Classes)),
			int64(missing),
			available,
			strings.Join(names, ","),
		}, nil
	},
}
