package sources

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"periscope.dev/periscope/pkg/sources/accessors"
)

// lastWriteManager names the single managedFields entry a trimmed object keeps: it carries the
// time of the object's last write (see accessors.LastWrite) and nothing else.
const lastWriteManager = "periscope-last-write"

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// trimMeta replaces managedFields by one entry that holds the last write time, and drops the
// last-applied annotation: together they are often most of an object's bytes.
func trimMeta(obj metav1.Object) {
	last := metav1.NewTime(accessors.LastWrite(obj))
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: lastWriteManager, Time: &last}})
	if ann := obj.GetAnnotations(); ann != nil {
		if _, ok := ann[lastAppliedAnnotation]; ok {
			trimmed := make(map[string]string, len(ann)-1)
			for k, v := range ann {
				if k != lastAppliedAnnotation {
					trimmed[k] = v
				}
			}
			obj.SetAnnotations(trimmed)
		}
	}
}

// KeepFields returns a transform for unstructured objects that keeps the trimmed metadata and
// only the listed field paths (for example {"spec", "provisionerClassName"}).
func KeepFields(paths ...[]string) cache.TransformFunc {
	return func(in interface{}) (interface{}, error) {
		u, ok := in.(*unstructured.Unstructured)
		if !ok {
			return in, nil // a DeletedFinalStateUnknown tombstone: leave it as it is
		}
		out := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": u.GetAPIVersion(),
			"kind":       u.GetKind(),
		}}
		if md, ok := u.Object["metadata"].(map[string]interface{}); ok {
			out.Object["metadata"] = md
		}
		for _, p := range paths {
			v, found, err := unstructured.NestedFieldNoCopy(u.Object, p...)
			if err != nil || !found {
				continue // a wrong type is reported by the accessors, not here
			}
			if err := unstructured.SetNestedField(out.Object, v, p...); err != nil {
				return nil, fmt.Errorf("trimming %s: %w", u.GetName(), err)
			}
		}
		trimMeta(out)
		return out, nil
	}
}
