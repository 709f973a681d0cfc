package clusterreadiness_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/clock"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/registry/visibility/clusterreadiness"
	"periscope.dev/periscope/pkg/store"
)

func readiness(ns, name, message string) *v1alpha1.ClusterReadiness {
	return &v1alpha1.ClusterReadiness{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "ClusterReadiness"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"env": "prod"}},
		Status: v1alpha1.ClusterReadinessStatus{ClusterType: v1alpha1.ClusterTypeCapi, Conditions: []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionFalse, Reason: "AddonsFailed", Message: message},
		}},
	}
}

// TestCachedListEncodingIsTheListEncoding: a list written from cached encodings is byte for
// byte what the API server's encoders write for the plain list, for every encoder, before and
// after objects change.
func TestCachedListEncodingIsTheListEncoding(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	metav1.AddMetaToScheme(scheme)
	cf := serializer.NewCodecFactory(scheme)
	s := clusterreadiness.NewStore(store.Config{})
	rest := clusterreadiness.NewREST(s, func() error { return nil }, clock.RealClock{})
	ctx := context.Background()

	encoders := map[string]runtime.Encoder{}
	for _, mt := range []string{"application/json", "application/yaml"} {
		info, ok := runtime.SerializerInfoForMediaType(cf.SupportedMediaTypes(), mt)
		if !ok {
			t.Fatalf("no serializer for %s", mt)
		}
		encoders[mt] = cf.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion)
		if info.PrettySerializer != nil {
			encoders[mt+";pretty"] = cf.EncoderForVersion(info.PrettySerializer, v1alpha1.SchemeGroupVersion)
		}
	}
	check := func(step string, wantItems int) {
		t.Helper()
		for round := 0; round < 2; round++ { // the second round is served from the cache
			obj, err := rest.List(ctx, &metainternalversion.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			co, ok := obj.(runtime.CacheableObject)
			if !ok {
				t.Fatalf("%T is not a CacheableObject", obj)
			}
			if !meta.IsListType(obj) || meta.LenList(obj) != wantItems {
				t.Errorf("%s: the wrapper is not a list of %d for reflection: %v, %d", step, wantItems, meta.IsListType(obj), meta.LenList(obj))
			}
			for name, enc := range encoders {
				var got, want bytes.Buffer
				if err := enc.Encode(obj, &got); err != nil {
					t.Fatal(err)
				}
				if err := enc.Encode(co.GetObject(), &want); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.String(), got.String()); diff != "" {
					t.Errorf("%s, %s, round %d (-plain +cached):\n%s", step, name, round, diff)
				}
			}
		}
	}
	check("empty", 0)
	for _, o := range []*v1alpha1.ClusterReadiness{
		readiness("team-a", "prod-1", `helm <release> & "quotes"`),
		readiness("team-a", "prod-2", "ok"),
		readiness("team-b", "dev-1", "ünïcode"),
	} {
		if _, err := s.Apply(o); err != nil {
			t.Fatal(err)
		}
	}
	check("three objects", 3)
	if _, err := s.Apply(readiness("team-a", "prod-2", "changed")); err != nil {
		t.Fatal(err)
	}
	s.Delete("team-b", "dev-1")
	check("after a change and a deletion", 2)

	// Table output reads the wrapper as the list it is.
	obj, err := rest.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	table, err := rest.ConvertToTable(ctx, obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 2 || table.ResourceVersion == "" {
		t.Errorf("table: %d rows, resourceVersion %q", len(table.Rows), table.ResourceVersion)
	}
	var names []string
	if err := meta.EachListItem(obj, func(o runtime.Object) error {
		names = append(names, o.(*v1alpha1.ClusterReadiness).Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"prod-1", "prod-2"}, names); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
}
