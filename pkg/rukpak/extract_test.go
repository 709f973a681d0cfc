package rukpak

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func parse(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]interface{}
	if err := json.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("bad test document %s: %v", doc, err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func TestBundleFromUnstructured(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    BundleRef
		wantErr string
	}{
		{name: "unpacked", doc: `{"metadata":{"name":"b"},"spec":{"provisionerClassName":"c"},"status":{"phase":"Unpacked"}}`, want: BundleRef{Name: "b", Class: "c", Progress: Ready}},
		{name: "failing", doc: `{"metadata":{"name":"b"},"spec":{"provisionerClassName":"c"},"status":{"phase":"Failing"}}`, want: BundleRef{Name: "b", Class: "c", Progress: Failing}},
		{name: "unpacking", doc: `{"metadata":{"name":"b"},"spec":{"provisionerClassName":"c"},"status":{"phase":"Unpacking"}}`, want: BundleRef{Name: "b", Class: "c", Progress: Pending}},
		{name: "no status yet", doc: `{"metadata":{"name":"b"},"spec":{"provisionerClassName":"c"}}`, want: BundleRef{Name: "b", Class: "c", Progress: Pending}},
		{name: "unknown phase waits", doc: `{"metadata":{"name":"b"},"spec":{"provisionerClassName":"c"},"status":{"phase":"Exploding"}}`, want: BundleRef{Name: "b", Class: "c", Progress: Pending}},
		{name: "no class", doc: `{"metadata":{"name":"b"},"spec":{}}`, wantErr: "spec.provisionerClassName is missing"},
		{name: "class of the wrong type", doc: `{"metadata":{"name":"b"},"spec":{"provisionerClassName":7}}`, wantErr: "spec.provisionerClassName: expected a string, got a number"},
		{name: "spec of the wrong type", doc: `{"metadata":{"name":"b"},"spec":"plain"}`, wantErr: "spec: expected an object, got a string"},
		{name: "phase of the wrong type", doc: `{"metadata":{"name":"b"},"spec":{"provisionerClassName":"c"},"status":{"phase":["x"]}}`, wantErr: "status.phase: expected a string, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BundleFromUnstructured(parse(t, tt.doc))
			checkRef(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestBundleDeploymentFromUnstructured(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    BundleRef
		wantErr string
	}{
		{name: "installed", doc: `{"metadata":{"name":"d"},"spec":{"provisionerClassName":"c"},"status":{"conditions":[{"type":"HasValidBundle","status":"False"},{"type":"Installed","status":"True"}]}}`, want: BundleRef{Name: "d", Class: "c", Progress: Ready}},
		{name: "install failed", doc: `{"metadata":{"name":"d"},"spec":{"provisionerClassName":"c"},"status":{"conditions":[{"type":"Installed","status":"False"}]}}`, want: BundleRef{Name: "d", Class: "c", Progress: Failing}},
		{name: "unknown", doc: `{"metadata":{"name":"d"},"spec":{"provisionerClassName":"c"},"status":{"conditions":[{"type":"Installed","status":"Unknown"}]}}`, want: BundleRef{Name: "d", Class: "c", Progress: Pending}},
		{name: "no condition yet", doc: `{"metadata":{"name":"d"},"spec":{"provisionerClassName":"c"},"status":{"conditions":[]}}`, want: BundleRef{Name: "d", Class: "c", Progress: Pending}},
		{name: "no status", doc: `{"metadata":{"name":"d"},"spec":{"provisionerClassName":"c"}}`, want: BundleRef{Name: "d", Class: "c", Progress: Pending}},
		{name: "conditions not a list", doc: `{"metadata":{"name":"d"},"spec":{"provisionerClassName":"c"},"status":{"conditions":{"Installed":true}}}`, wantErr: "status.conditions: expected a list, got an object"},
		{name: "condition not an object", doc: `{"metadata":{"name":"d"},"spec":{"provisionerClassName":"c"},"status":{"conditions":["Installed"]}}`, wantErr: "status.conditions[0]: expected an object, got a string"},
		{name: "condition status of the wrong type", doc: `{"metadata":{"name":"d"},"spec":{"provisionerClassName":"c"},"status":{"conditions":[{"type":"Installed","status":true}]}}`, wantErr: "status.conditions[0].status: expected a string, got a boolean"},
		{name: "status of the wrong type", doc: `{"metadata":{"name":"d"},"spec":{"provisionerClassName":"c"},"status":3}`, wantErr: "status: expected an object, got a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BundleDeploymentFromUnstructured(parse(t, tt.doc))
			checkRef(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func checkRef(t *testing.T, got BundleRef, err error, want BundleRef, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || err.Error() != wantErr {
			t.Fatalf("err = %v, want %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	got.LastWrite = want.LastWrite
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// FuzzExtract feeds arbitrary JSON to the accessors: they may return errors but must never
// panic, and an accepted object always names a class.
func FuzzExtract(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"b"},"spec":{"provisionerClassName":"c"},"status":{"phase":"Unpacked"}}`,
		`{"spec":{"provisionerClassName":"c"},"status":{"conditions":[{"type":"Installed","status":"True"}]}}`,
		`{"spec":null,"status":{"conditions":[null,1,"x",{"type":5}]}}`,
		`{"metadata":{"name":5,"managedFields":"x"},"spec":[]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var obj map[string]interface{}
		if err := json.Unmarshal([]byte(doc), &obj); err != nil {
			return
		}
		u := &unstructured.Unstructured{Object: obj}
		for _, extract := range []func(*unstructured.Unstructured) (BundleRef, error){BundleFromUnstructured, BundleDeploymentFromUnstructured} {
			ref, err := extract(u)
			if err == nil && ref.Class == "" {
				t.Fatalf("accepted %s without a class", doc)
			}
		}
	})
}
