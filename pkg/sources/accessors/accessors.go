// Package accessors reads fields of unstructured source objects without ever panicking: a field
// of the wrong type is an error that names the field, so that one malformed object is reported
// instead of breaking the computation of everything else.
package accessors

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// field walks obj along path. found is false when a step is absent or null; err reports a
// step that is not an object.
func field(obj map[string]interface{}, path ...string) (value interface{}, found bool, err error) {
	var cur interface{} = obj
	for i, p := range path {
		m, ok := cur.(map[string]interface{})
		if !ok {
			if cur == nil {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("%s: expected an object, got %s", strings.Join(path[:i], "."), typeName(cur))
		}
		cur, ok = m[p]
		if !ok || cur == nil {
			return nil, false, nil
		}
	}
	return cur, true, nil
}

// String returns the string at path.
func String(obj map[string]interface{}, path ...string) (string, bool, error) {
	v, found, err := field(obj, path...)
	if err != nil || !found {
		return "", found, err
	}
	s, ok := v.(string)
	if !ok {
		return "", false, fmt.Errorf("%s: expected a string, got %s", strings.Join(path, "."), typeName(v))
	}
	return s, true, nil
}

// Bool returns the boolean at path.
func Bool(obj map[string]interface{}, path ...string) (bool, bool, error) {
	v, found, err := field(obj, path...)
	if err != nil || !found {
		return false, found, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, false, fmt.Errorf("%s: expected a boolean, got %s", strings.Join(path, "."), typeName(v))
	}
	return b, true, nil
}

// Slice returns the list at path.
func Slice(obj map[string]interface{}, path ...string) ([]interface{}, bool, error) {
	v, found, err := field(obj, path...)
	if err != nil || !found {
		return nil, found, err
	}
	s, ok := v.([]interface{})
	if !ok {
		return nil, false, fmt.Errorf("%s: expected a list, got %s", strings.Join(path, "."), typeName(v))
	}
	return s, true, nil
}

// Map returns the object at path.
func Map(obj map[string]interface{}, path ...string) (map[string]interface{}, bool, error) {
	v, found, err := field(obj, path...)
	if err != nil || !found {
		return nil, found, err
	}
	m, ok := v.(map[string]interface{})
	if !ok {
		return nil, false, fmt.Errorf("%s: expected an object, got %s", strings.Join(path, "."), typeName(v))
	}
	return m, true, nil
}

// ConditionStatus returns the status of the condition of type condType in status.conditions.
func ConditionStatus(obj map[string]interface{}, condType string) (string, bool, error) {
	conditions, found, err := Slice(obj, "status", "conditions")
	if err != nil || !found {
		return "", false, err
	}
	for i, c := range conditions {
		m, ok := c.(map[string]interface{})
		if !ok {
			return "", false, fmt.Errorf("status.conditions[%d]: expected an object, got %s", i, typeName(c))
		}
		t, _, err := String(m, "type")
		if err != nil {
			return "", false, fmt.Errorf("status.conditions[%d].%w", i, err)
		}
		if t != condType {
			continue
		}
		s, found, err := String(m, "status")
		if err != nil {
			return "", false, fmt.Errorf("status.conditions[%d].%w", i, err)
		}
		return s, found, nil
	}
	return "", false, nil
}

// LastWrite returns when obj was last written: the newest managedFields time (which the API
// server updates on every write, status included), else its creation time. Source timestamps,
// unlike a replica's clock, are the same on every replica.
func LastWrite(obj metav1.Object) time.Time {
	latest := obj.GetCreationTimestamp().Time
	for _, mf := range obj.GetManagedFields() {
		if mf.Time != nil && mf.Time.After(latest) {
			latest = mf.Time.Time
		}
	}
	return latest
}

func typeName(v interface{}) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, int32, int, float64:
		return "a number"
	case []interface{}:
		return "a list"
	case map[string]interface{}:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
