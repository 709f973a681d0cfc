// Package accessors reads fields of unstructured source objects without ever panicking: a field
// of the wrong type is an error that names the field, so that one malformed object is reported
// instead of breaking the computation of everything else.
package accessors

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	c, found, err := FindCondition(obj, condType)
	if err != nil || !found {
		return "", false, err
	}
	return c.Status, c.Status != "", nil
}

// LastWrite returns when obj was last written: the newest managedFields time (which the API
// server updates on every write, status included), else its creation time. Source timestamps,
// unlike a replica's clock, are the same on every replica.
func LastWrite(obj metav1.Object) time.Time {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return lastWriteUnstructured(u)
	}
	latest := obj.GetCreationTimestamp().Time
	for _, mf := range obj.GetManagedFields() {
		if mf.Time != nil && mf.Time.After(latest) {
			latest = mf.Time.Time
		}
	}
	return latest
}

// lastWriteUnstructured reads the times straight from the map: GetManagedFields would convert
// every entry, fieldsV1 included, by reflection, which cost more than the readiness computation
// that needs the time (see docs/benchmarks.md).
func lastWriteUnstructured(u *unstructured.Unstructured) time.Time {
	latest := u.GetCreationTimestamp().Time
	md, _ := u.Object["metadata"].(map[string]interface{})
	entries, _ := md["managedFields"].([]interface{})
	for _, e := range entries {
		entry, _ := e.(map[string]interface{})
		s, _ := entry["time"].(string)
		if s == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339, s); err == nil && t.After(latest) {
			latest = t
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

// Condition is a status condition as read from an unstructured object.
type Condition struct {
	Status  string
	Reason  string
	Message string
}

// FindCondition returns the condition of type condType in the list at path (normally
// status.conditions).
func FindCondition(obj map[string]interface{}, condType string, path ...string) (Condition, bool, error) {
	if len(path) == 0 {
		path = []string{"status", "conditions"}
	}
	list, found, err := Slice(obj, path...)
	if err != nil || !found {
		return Condition{}, false, err
	}
	where := strings.Join(path, ".")
	for i, item := range list {
		m, ok := item.(map[string]interface{})
		if !ok {
			return Condition{}, false, fmt.Errorf("%s[%d]: expected an object, got %s", where, i, typeName(item))
		}
		t, _, err := String(m, "type")
		if err != nil {
			return Condition{}, false, fmt.Errorf("%s[%d].%w", where, i, err)
		}
		if t != condType {
			continue
		}
		var c Condition
		if err := Fields(m, []string{"status", "reason", "message"}, &c.Status, &c.Reason, &c.Message); err != nil {
			return Condition{}, false, fmt.Errorf("%s[%d].%w", where, i, err)
		}
		return c, true, nil
	}
	return Condition{}, false, nil
}

// StringMap returns the map of strings at path.
func StringMap(obj map[string]interface{}, path ...string) (map[string]string, bool, error) {
	m, found, err := Map(obj, path...)
	if err != nil || !found {
		return nil, found, err
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, false, fmt.Errorf("%s.%s: expected a string, got %s", strings.Join(path, "."), k, typeName(v))
		}
		out[k] = s
	}
	return out, true, nil
}

// Fields reads the string fields names of obj into dsts (in order); the first field of the
// wrong type is the error.
func Fields(obj map[string]interface{}, names []string, dsts ...*string) error {
	for i, name := range names {
		v, _, err := String(obj, name)
		if err != nil {
			return err
		}
		*dsts[i] = v
	}
	return nil
}
