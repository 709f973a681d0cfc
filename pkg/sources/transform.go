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

// ItemFields names a list field and the keys its items keep.
type ItemFields struct {
	Path []string
	Keys []string
}

// TrimItems returns transform followed by trimming each listed list's items to their named keys
// (an item that is not an object is kept as it is, for the accessors to report). Sveltos's
// status lists carry hashes, timestamps and chart details that nothing reads; at fleet scale
// they were a third of the heap (docs/benchmarks.md).
func TrimItems(transform cache.TransformFunc, lists ...ItemFields) cache.TransformFunc {
	return func(in interface{}) (interface{}, error) {
		out, err := transform(in)
		if err != nil {
			return nil, err
		}
		u, ok := out.(*unstructured.Unstructured)
		if !ok {
			return out, nil
		}
		for _, l := range lists {
			items, found, err := unstructured.NestedFieldNoCopy(u.Object, l.Path...)
			list, isList := items.([]interface{})
			if err != nil || !found || !isList {
				continue
			}
			trimmed := make([]interface{}, len(list))
			for i, item := range list {
				m, ok := item.(map[string]interface{})
				if !ok {
					trimmed[i] = item
					continue
				}
				kept := make(map[string]interface{}, len(l.Keys))
				for _, k := range l.Keys {
					if v, ok := m[k]; ok {
						kept[k] = v
					}
				}
				trimmed[i] = kept
			}
			if err := unstructured.SetNestedField(u.Object, trimmed, l.Path...); err != nil {
				return nil, fmt.Errorf("trimming %s: %w", u.GetName(), err)
			}
		}
		return u, nil
	}
}
