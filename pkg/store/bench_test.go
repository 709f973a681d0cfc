package store_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/store"
	"periscope.dev/periscope/test/bench/benchdata"
)

// Micro-benchmarks of the store with the ClusterReadiness objects of the benchmark's generated
// fleet. Run with `make bench-micro`; compare runs with benchstat.

// loaded returns a store holding the n computed objects, and a second version of each (its
// Ready condition flipped), to apply as changes.
func loaded(b *testing.B, n int) (*store.Store, []*v1alpha1.ClusterReadiness, []*v1alpha1.ClusterReadiness) {
	b.Helper()
	f, err := benchdata.New(n)
	if err != nil {
		b.Fatal(err)
	}
	objs := f.Objects()
	changed := make([]*v1alpha1.ClusterReadiness, n)
	s := store.New(store.Config{
		Resource: v1alpha1.Resource("clusterreadinesses"),
		NewFunc:  func() runtime.Object { return &v1alpha1.ClusterReadiness{} },
	})
	for i, o := range objs {
		c := o.DeepCopy()
		c.Status.Ready = !c.Status.Ready
		changed[i] = c
		if _, err := s.Apply(o.DeepCopy()); err != nil {
			b.Fatal(err)
		}
	}
	goruntime.GC() // the fleet's generation leaves garbage that would be collected while timing
	return s, objs, changed
}

func everything() storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(), GetAttrs: storage.DefaultNamespaceScopedAttr}
}

// BenchmarkApply is a store update among 5,000 objects: a change (recorded in the event log),
// and a recomputation that changes nothing (compared, then dropped). Each op builds the object
// anew, as the controller does.
func BenchmarkApply(b *testing.B) {
	s, objs, changed := loaded(b, 5000)
	// changedIn[i] is whether the store holds the second version of object i. -count runs
	// each sub-benchmark several times on the same store, so this outlives a run.
	changedIn := make([]bool, len(objs))
	b.Run("changed", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			// Apply the version the store does not hold, so that every apply is a change.
			k := i % len(objs)
			o := changed[k]
			if changedIn[k] {
				o = objs[k]
			}
			changedIn[k] = !changedIn[k]
			if ok, err := s.Apply(o.DeepCopy()); err != nil || !ok {
				b.Fatalf("apply: changed %v, %v", ok, err)
			}
			i++
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		for k, o := range objs { // back to the first version of every object
			if _, err := s.Apply(o.DeepCopy()); err != nil {
				b.Fatal(err)
			}
			changedIn[k] = false
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if ok, err := s.Apply(objs[i%len(objs)].DeepCopy()); err != nil || ok {
				b.Fatalf("apply: changed %v, %v", ok, err)
			}
			i++
		}
	})
}

// BenchmarkFanOut is one change delivered to every watcher of the store: the time from Apply
// until each of them has received the event.
func BenchmarkFanOut(b *testing.B) {
	for _, watchers := range []int{100, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			s, objs, changed := loaded(b, 5000)
			changedIn := make([]bool, len(objs))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var received atomic.Int64
			var wg sync.WaitGroup
			defer wg.Wait()
			defer cancel()
			for range watchers {
				w, err := s.Watch(ctx, store.WatchOptions{Predicate: everything(), ResourceVersion: s.ResourceVersion()})
				if err != nil {
					b.Fatal(err)
				}
				wg.Go(func() {
					defer w.Stop()
					for {
						select {
						case <-w.ResultChan():
							received.Add(1)
						case <-ctx.Done():
							return
						}
					}
				})
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				// Alternate the versions, so that every apply is a change and reaches every
				// watcher.
				k := i % len(objs)
				o := changed[k]
				if changedIn[k] {
					o = objs[k]
				}
				changedIn[k] = !changedIn[k]
				want := received.Load() + int64(watchers)
				if _, err := s.Apply(o.DeepCopy()); err != nil {
					b.Fatal(err)
				}
				for received.Load() < want {
					goruntime.Gosched() // the watchers need the cores more than this loop
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i*watchers), "ns/delivery")
		})
	}
}

// BenchmarkList is the store's side of `list clusterreadinesses -A` with 5,000 objects: the
// selection and the copies handed to the API server (serialization is benchmarked in
// pkg/registry/visibility/clusterreadiness).
func BenchmarkList(b *testing.B) {
	s, _, _ := loaded(b, 5000)
	b.ReportAllocs()
	for b.Loop() {
		res, err := s.List(context.Background(), store.ListOptions{Predicate: everything()})
		if err != nil || len(res.Items) != 5000 {
			b.Fatalf("list: %d items, %v", len(res.Items), err)
		}
	}
}
