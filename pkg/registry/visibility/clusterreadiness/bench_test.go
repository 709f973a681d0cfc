package clusterreadiness_test

import (
	"bytes"
	"context"
	goruntime "runtime"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/clock"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/registry/readonly"
	"periscope.dev/periscope/pkg/registry/visibility/clusterreadiness"
	"periscope.dev/periscope/pkg/store"
	"periscope.dev/periscope/test/bench/benchdata"
)

// Micro-benchmarks of serving `list clusterreadinesses -A` with 5,000 clusters from the
// benchmark's generated fleet. Run with `make bench-micro`; compare runs with benchstat.

const fleetSize = 5000

// codecs encode as the API server does: ClusterReadiness in its one version, and Tables.
func codecs(b *testing.B) serializer.CodecFactory {
	b.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	metav1.AddMetaToScheme(scheme)
	return serializer.NewCodecFactory(scheme)
}

func served(b *testing.B) *readonly.REST {
	b.Helper()
	f, err := benchdata.New(fleetSize)
	if err != nil {
		b.Fatal(err)
	}
	s := clusterreadiness.NewStore(store.Config{})
	for _, o := range f.Objects() {
		if _, err := s.Apply(o); err != nil {
			b.Fatal(err)
		}
	}
	goruntime.GC() // the fleet's generation leaves garbage that would be collected while timing
	return clusterreadiness.NewREST(s, func() error { return nil }, clock.RealClock{})
}

// BenchmarkEncodeList is the JSON encoding of a ClusterReadinessList of 5,000.
func BenchmarkEncodeList(b *testing.B) {
	rest := served(b)
	list, err := rest.List(context.Background(), &metainternalversion.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	enc := codecs(b).LegacyCodec(v1alpha1.SchemeGroupVersion)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := enc.Encode(list, &buf); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// BenchmarkServeList is Periscope's whole side of the list, as JSON and as the Table kubectl
// asks for (rows carry the objects' metadata only, as the API server makes them): the store's
// list, the conversion and the encoding.
func BenchmarkServeList(b *testing.B) {
	rest := served(b)
	cf := codecs(b)
	ctx := context.Background()
	var buf bytes.Buffer
	b.Run("json", func(b *testing.B) {
		enc := cf.LegacyCodec(v1alpha1.SchemeGroupVersion)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			list, err := rest.List(ctx, &metainternalversion.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.Encode(list, &buf); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(buf.Len()))
	})
	b.Run("table", func(b *testing.B) {
		enc := cf.LegacyCodec(metav1.SchemeGroupVersion)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			list, err := rest.List(ctx, &metainternalversion.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			table, err := rest.ConvertToTable(ctx, list, nil)
			if err != nil {
				b.Fatal(err)
			}
			for i := range table.Rows {
				m, err := meta.Accessor(table.Rows[i].Object.Object)
				if err != nil {
					b.Fatal(err)
				}
				partial := meta.AsPartialObjectMetadata(m)
				partial.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"))
				table.Rows[i].Object.Object = partial
			}
			if err := enc.Encode(table, &buf); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(buf.Len()))
	})
}
