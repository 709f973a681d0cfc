package readonly

import (
	"bytes"
	"context"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"periscope.dev/periscope/pkg/store"
)

func TestIsPlainJSON(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cf := serializer.NewCodecFactory(scheme)
	want := map[string]bool{"application/json": true, "application/json;pretty": false, "application/yaml": false, "application/vnd.kubernetes.protobuf": false}
	for _, info := range cf.SupportedMediaTypes() {
		enc := cf.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
		if got := isPlainJSON(enc.Identifier()); got != want[info.MediaType] {
			t.Errorf("%s: isPlainJSON = %v", info.MediaType, got)
		}
		if info.PrettySerializer != nil {
			pretty := cf.EncoderForVersion(info.PrettySerializer, corev1.SchemeGroupVersion)
			if isPlainJSON(pretty.Identifier()) {
				t.Errorf("%s pretty: isPlainJSON = true", info.MediaType)
			}
		}
	}
	if isPlainJSON("not json") || isPlainJSON(`{"name":"json"}`) {
		t.Error("isPlainJSON accepted an identifier that is not the versioning JSON encoder")
	}
}

func TestEncodingCacheEncodesEachVersionOnceAndPrunes(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	enc := serializer.NewCodecFactory(scheme).LegacyCodec(corev1.SchemeGroupVersion)
	s := store.New(store.Config{Resource: corev1.Resource("configmaps"), NewFunc: func() runtime.Object { return &corev1.ConfigMap{} }})
	cm := func(name, v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string]string{"v": v}}
	}
	cache := NewEncodingCache(s)
	encodes := 0
	counting := func(obj runtime.Object, w io.Writer) error {
		encodes++
		return enc.Encode(obj, w)
	}
	listAll := func() {
		t.Helper()
		page, err := s.List(context.Background(), store.ListOptions{Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			raw, err := cache.encoded(item, enc.Identifier(), counting)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.HasSuffix(raw, []byte("\n")) || !bytes.Contains(raw, []byte(`"kind":"ConfigMap"`)) {
				t.Errorf("cached encoding %q", raw)
			}
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, err := s.Apply(cm(name, "1")); err != nil {
			t.Fatal(err)
		}
	}
	for round := 0; round < 3; round++ {
		listAll()
	}
	if encodes != 3 {
		t.Errorf("encodes = %d over three lists of three unchanged objects, want 3", encodes)
	}
	if _, err := s.Apply(cm("a", "2")); err != nil {
		t.Fatal(err)
	}
	s.Delete("ns", "c")
	listAll()
	if encodes != 4 {
		t.Errorf("encodes = %d after one change, want 4", encodes)
	}
	cache.mu.Lock()
	cache.pruneLocked()
	n := len(cache.entries)
	cache.mu.Unlock()
	if n != 2 {
		t.Errorf("entries after pruning = %d, want 2 (the deleted object's dropped)", n)
	}
}
