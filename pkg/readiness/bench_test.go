package readiness_test

import (
	"runtime"
	"testing"

	"periscope.dev/periscope/pkg/readiness"
	"periscope.dev/periscope/test/bench/benchdata"
	"periscope.dev/periscope/test/bench/fixtures"
)

// Micro-benchmarks of the computation, on the benchmark's generated fleet (40 ClusterProfiles,
// about 10 matching each cluster). Run with `make bench-micro`; compare runs with benchstat.

func fleet(b *testing.B, n int) *benchdata.Fleet {
	b.Helper()
	f, err := benchdata.New(n)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC() // the fleet's generation leaves garbage that would be collected while timing
	return f
}

// BenchmarkCompute is one cluster's readiness: what a ClusterSummary or cluster event costs.
func BenchmarkCompute(b *testing.B) {
	f := fleet(b, 200)
	inputs := make([]readiness.Input, len(f.Clusters))
	for i := range inputs {
		inputs[i] = f.Input(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		readiness.Compute(inputs[i%len(inputs)])
		i++
	}
}

// BenchmarkMatches is profile matching: one (profile, cluster) pair, and one profile against
// a fleet of 5,000 clusters (what a profile event costs to find the clusters it matches now).
func BenchmarkMatches(b *testing.B) {
	f := fleet(b, 5000)
	b.Run("pair", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			readiness.Matches(f.Profiles[i%len(f.Profiles)], f.Clusters[i%len(f.Clusters)])
			i++
		}
	})
	b.Run("profile-vs-5000-clusters", func(b *testing.B) {
		b.ReportAllocs()
		i, matched := 0, 0
		for b.Loop() {
			p := f.Profiles[i%len(f.Profiles)]
			for _, c := range f.Clusters {
				if readiness.Matches(p, c) {
					matched++
				}
			}
			i++
		}
		b.ReportMetric(float64(matched)/float64(i), "matched/op")
	})
}

// BenchmarkExtract is reading source objects into the computation's inputs, as every informer
// event of that kind does.
func BenchmarkExtract(b *testing.B) {
	g, err := fixtures.New(fixtures.DefaultConfig(50))
	if err != nil {
		b.Fatal(err)
	}
	// As the informer cache holds them, after Periscope's transforms.
	c := g.Cluster(0)
	summary, err := benchdata.Cached(c.Summaries[0])
	if err != nil {
		b.Fatal(err)
	}
	cluster, err := benchdata.Cached(c.Object)
	if err != nil {
		b.Fatal(err)
	}
	profile, err := benchdata.Cached(g.ClusterProfiles()[0])
	if err != nil {
		b.Fatal(err)
	}
	b.Run("summary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			readiness.SummaryFromUnstructured(summary)
		}
	})
	b.Run("cluster", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			readiness.ClusterFromCAPI(cluster)
		}
	})
	b.Run("profile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			readiness.ProfileFromUnstructured(profile)
		}
	})
}
