package results

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"periscope.dev/periscope/test/bench/stats"
)

func TestParseMicro(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: periscope.dev/periscope/pkg/store
cpu: Some CPU
BenchmarkFanOut/watchers=1000-2         	     100	   2000000 ns/op	  1000 B/op	      10 allocs/op	      1000 events/op
BenchmarkFanOut/watchers=1000-2         	     100	   4000000 ns/op	  3000 B/op	      10 allocs/op	      1000 events/op
BenchmarkFanOut/watchers=1000-2         	     100	   3000000 ns/op	  2000 B/op	      10 allocs/op	      1000 events/op
PASS
ok  	periscope.dev/periscope/pkg/store	3.2s
pkg: periscope.dev/periscope/pkg/readiness
BenchmarkCompute-2	   50000	     25000 ns/op
`
	got, err := ParseMicro(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []Micro{
		{Package: "periscope.dev/periscope/pkg/readiness", Name: "BenchmarkCompute", Runs: 1, Metrics: map[string]float64{"ns/op": 25000}},
		{Package: "periscope.dev/periscope/pkg/store", Name: "BenchmarkFanOut/watchers=1000", Runs: 3, Metrics: map[string]float64{
			"ns/op": 3000000, "B/op": 2000, "allocs/op": 10, "events/op": 1000,
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func report() *Report {
	five := Scale{
		Clusters: 5000, Summaries: 50000,
		List: &List{Variants: []ListVariant{
			{Name: VariantReadiness, Ms: stats.Summary{N: 5, Median: 120}},
			{Name: VariantFloor, Ms: stats.Summary{N: 5, Median: 100}},
			{Name: VariantSummaries, Ms: stats.Summary{N: 5, Median: 3000}},
		}},
		Notify: &Notify{Samples: 200, Added: stats.Summary{N: 200, P99: 60}},
		FanOut: &FanOut{Watchers: 1000, Rounds: []FanOutRound{{Ms: stats.Summary{Max: 700}}}, Ms: stats.Summary{P99: 650}},
		Memory: &Memory{HeapBytes: 100 << 20, HeapPerCluster: 100 << 20 / 5000},
		Work:   &Work{MetricFound: false},
	}
	one := Scale{Clusters: 1000, Summaries: 10000, Memory: &Memory{HeapBytes: 40 << 20, HeapPerCluster: 40 << 20 / 1000}}
	return &Report{Baseline: &Memory{HeapBytes: 20 << 20}, Scales: []Scale{five, one}}
}

func TestEvaluate(t *testing.T) {
	type verdict struct {
		Name string
		Pass string
	}
	var got []verdict
	for _, tg := range Evaluate(report()) {
		if tg.Scale != 5000 {
			t.Errorf("%s evaluated at N=%d, want the largest scale", tg.Name, tg.Scale)
		}
		got = append(got, verdict{tg.Name, mark(tg.Pass)})
	}
	want := []verdict{
		{"List vs floor", "**pass**"},
		{"List vs raw summaries", "**pass**"},
		{"Notification latency", "**FAIL**"},
		{"Fan-out", "**pass**"},
		{"Memory", "**pass**"},
		{"Work per source event", "n/a"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMarkdown(t *testing.T) {
	r := report()
	r.Targets = Evaluate(r)
	md := Markdown(r)
	for _, want := range []string{"# Benchmarks", "| List vs floor |", "N = 1000 | N = 5000", "missing from /metrics", ChartLatency, "grows by **15.4 KiB per cluster**"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
