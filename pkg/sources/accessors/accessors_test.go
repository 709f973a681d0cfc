package accessors

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestAccessorsNameTheBadField(t *testing.T) {
	obj := map[string]interface{}{
		"spec": map[string]interface{}{"name": "x", "count": int64(3), "flag": true, "list": []interface{}{}, "labels": map[string]interface{}{"a": "b", "n": int64(1)}},
		"status": map[string]interface{}{"conditions": []interface{}{
			map[string]interface{}{"type": "Ready", "status": "True", "reason": "Fine", "message": "ok"},
			map[string]interface{}{"type": "Broken", "status": false},
		}},
		"scalar": "s",
	}
	errString := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	tests := []struct {
		name    string
		call    func() (interface{}, bool, error)
		want    interface{}
		found   bool
		wantErr string
	}{
		{"string", func() (interface{}, bool, error) { return String(obj, "spec", "name") }, "x", true, ""},
		{"absent string", func() (interface{}, bool, error) { return String(obj, "spec", "missing") }, "", false, ""},
		{"string of the wrong type", func() (interface{}, bool, error) { return String(obj, "spec", "count") }, "", false, "spec.count: expected a string, got a number"},
		{"walking through a scalar", func() (interface{}, bool, error) { return String(obj, "scalar", "x") }, "", false, "scalar: expected an object, got a string"},
		{"bool", func() (interface{}, bool, error) { return Bool(obj, "spec", "flag") }, true, true, ""},
		{"bool of the wrong type", func() (interface{}, bool, error) { return Bool(obj, "spec", "name") }, false, false, "spec.name: expected a boolean, got a string"},
		{"slice", func() (interface{}, bool, error) { return Slice(obj, "spec", "list") }, []interface{}{}, true, ""},
		{"map of strings with a number", func() (interface{}, bool, error) { return StringMap(obj, "spec", "labels") }, map[string]string(nil), false, "spec.labels.n: expected a string, got a number"},
		{"condition", func() (interface{}, bool, error) { return FindCondition(obj, "Ready") }, Condition{Status: "True", Reason: "Fine", Message: "ok"}, true, ""},
		{"condition with a wrong type", func() (interface{}, bool, error) { return FindCondition(obj, "Broken") }, Condition{}, false, "status.conditions[1].status: expected a string, got a boolean"},
		{"absent condition", func() (interface{}, bool, error) { return FindCondition(obj, "Other") }, Condition{}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := tt.call()
			if errString(err) != tt.wantErr {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if found != tt.found {
				t.Errorf("found = %v, want %v", found, tt.found)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLastWrite(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	later := metav1.NewTime(created.Add(time.Hour))
	m := &metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}
	if got := LastWrite(m); !got.Equal(created) {
		t.Errorf("no managedFields: %v, want the creation time", got)
	}
	m.ManagedFields = []metav1.ManagedFieldsEntry{{Time: &later}, {Time: nil}}
	if got := LastWrite(m); !got.Equal(later.Time) {
		t.Errorf("with managedFields: %v, want %v", got, later)
	}

	// The unstructured fast path reads the same times, and skips what it cannot parse.
	u := &unstructured.Unstructured{Object: map[string]interface{}{}}
	u.SetCreationTimestamp(metav1.NewTime(created))
	if got := LastWrite(u); !got.Equal(created) {
		t.Errorf("unstructured without managedFields: %v, want the creation time", got)
	}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "a", Time: &later}, {Manager: "b"}})
	md := u.Object["metadata"].(map[string]interface{})
	md["managedFields"] = append(md["managedFields"].([]interface{}), map[string]interface{}{"time": "not a time"}, "not an entry")
	if got := LastWrite(u); !got.Equal(later.Time) {
		t.Errorf("unstructured with managedFields: %v, want %v", got, later)
	}
}
