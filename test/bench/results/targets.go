package results

import (
	"fmt"
	"sort"
	"strings"
)

// The list variants, by name.
const (
	VariantReadiness       = "clusterreadinesses"
	VariantReadinessTable  = "clusterreadinesses-table"
	VariantReadinessDirect = "clusterreadinesses-direct"
	VariantSummaries       = "clustersummaries"
	VariantFloor           = "configmaps-floor"
	VariantFloorTable      = "configmaps-floor-table"
	VariantFloorDefault    = "configmaps-floor-consistent"
)

// Thresholds of the targets, and the band within which work counts as proportional.
const (
	ListFloorFactor    = 1.5
	AddedLatencyP99Ms  = 50
	FanOutP99Ms        = 1000
	FanOutWatchers     = 1000
	WorkProportionalLo = 0.9
	WorkProportionalHi = 1.2
	// MemoryLinearSlack is how much more heap each cluster added to the smaller fleet may cost
	// than each cluster of the smaller fleet did (above the baseline), and still count as linear.
	MemoryLinearSlack = 1.25
)

// Variant returns the named list variant, or nil.
func (l *List) Variant(name string) *ListVariant {
	if l == nil {
		return nil
	}
	for i := range l.Variants {
		if l.Variants[i].Name == name {
			return &l.Variants[i]
		}
	}
	return nil
}

func verdict(ok bool) *bool { return &ok }

// scalesBySize returns the scales, smallest fleet first.
func scalesBySize(r *Report) []*Scale {
	out := make([]*Scale, 0, len(r.Scales))
	for i := range r.Scales {
		out = append(out, &r.Scales[i])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Clusters < out[j].Clusters })
	return out
}

// Evaluate checks the targets at the largest scale of the run.
func Evaluate(r *Report) []Target {
	scales := scalesBySize(r)
	if len(scales) == 0 {
		return nil
	}
	s := scales[len(scales)-1]
	var smaller *Scale
	if len(scales) > 1 {
		smaller = scales[0]
	}
	return []Target{
		listFloorTarget(s), listSummariesTarget(s), notifyTarget(s), fanOutTarget(s),
		memoryTarget(r.Baseline, s, smaller), workTarget(s),
	}
}

func listFloorTarget(s *Scale) Target {
	t := Target{Name: "List vs floor", Goal: fmt.Sprintf("clusterreadinesses -A through kube-apiserver within %.1fx of listing N ConfigMaps of equal bytes from the watch cache", ListFloorFactor), Scale: s.Clusters}
	cr, floor := s.List.Variant(VariantReadiness), s.List.Variant(VariantFloor)
	if cr == nil || floor == nil || floor.Ms.Median == 0 {
		t.Measured = "not measured"
		return t
	}
	ratio := cr.Ms.Median / floor.Ms.Median
	t.Measured = fmt.Sprintf("JSON %.2fx (%s vs %s median)", ratio, Ms(cr.Ms.Median), Ms(floor.Ms.Median))
	pass := ratio <= ListFloorFactor
	if ct, ft := s.List.Variant(VariantReadinessTable), s.List.Variant(VariantFloorTable); ct != nil && ft != nil && ft.Ms.Median > 0 {
		tr := ct.Ms.Median / ft.Ms.Median
		t.Measured += fmt.Sprintf("; Table %.2fx (%s vs %s)", tr, Ms(ct.Ms.Median), Ms(ft.Ms.Median))
		pass = pass && tr <= ListFloorFactor
	}
	t.Pass = verdict(pass)
	return t
}

func listSummariesTarget(s *Scale) Target {
	t := Target{Name: "List vs raw summaries", Goal: "clusterreadinesses -A faster than clustersummaries -A", Scale: s.Clusters}
	cr, sum := s.List.Variant(VariantReadiness), s.List.Variant(VariantSummaries)
	if cr == nil || sum == nil || cr.Ms.Median == 0 {
		t.Measured = "not measured"
		return t
	}
	t.Measured = fmt.Sprintf("%s vs %s median (%.1fx faster, %s vs %s)", Ms(cr.Ms.Median), Ms(sum.Ms.Median),
		sum.Ms.Median/cr.Ms.Median, Bytes(float64(cr.Bytes)), Bytes(float64(sum.Bytes)))
	t.Pass = verdict(cr.Ms.Median < sum.Ms.Median)
	return t
}

func notifyTarget(s *Scale) Target {
	t := Target{Name: "Notification latency", Goal: fmt.Sprintf("added latency p99 under %d ms; polling shown beside", AddedLatencyP99Ms), Scale: s.Clusters}
	n := s.Notify
	if n == nil || n.Samples == 0 {
		t.Measured = "not measured"
		return t
	}
	t.Measured = fmt.Sprintf("added p99 %s (median %s) over %d samples; Periscope p99 %s, floor p99 %s; polling every %gs: median %s, p99 %s",
		Ms(n.Added.P99), Ms(n.Added.Median), n.Samples, Ms(n.Periscope.P99), Ms(n.Floor.P99), n.PollIntervalSeconds, Ms(n.Polling.Median), Ms(n.Polling.P99))
	t.Pass = verdict(n.Added.P99 < AddedLatencyP99Ms)
	return t
}

func fanOutTarget(s *Scale) Target {
	t := Target{Name: "Fan-out", Goal: fmt.Sprintf("%d watchers all served within %d ms at p99", FanOutWatchers, FanOutP99Ms), Scale: s.Clusters}
	f := s.FanOut
	if f == nil || len(f.Rounds) == 0 {
		t.Measured = "not measured"
		return t
	}
	missing, worst := 0, 0.0
	for _, r := range f.Rounds {
		missing += r.Missing
		worst = max(worst, r.Ms.Max)
	}
	t.Measured = fmt.Sprintf("p99 %s, median %s over %d watchers x %d rounds; slowest watcher %s", Ms(f.Ms.P99), Ms(f.Ms.Median), f.Watchers, len(f.Rounds), Ms(worst))
	if missing > 0 {
		t.Measured += fmt.Sprintf("; %d deliveries missing", missing)
	}
	if f.Watchers < FanOutWatchers {
		t.Measured += fmt.Sprintf(" (only %d watchers: not the target's load)", f.Watchers)
	}
	t.Pass = verdict(missing == 0 && f.Ms.P99 <= FanOutP99Ms && f.Watchers >= FanOutWatchers)
	return t
}

// PerCluster returns the heap a fleet adds per cluster and per summary above the baseline (or
// the whole heap divided, without a baseline).
func PerCluster(base *Memory, s *Scale) (perCluster, perSummary float64) {
	if s.Memory == nil || s.Clusters == 0 {
		return 0, 0
	}
	heap := float64(s.Memory.HeapBytes)
	if base != nil {
		heap -= float64(base.HeapBytes)
	}
	return heap / float64(s.Clusters), heap / float64(max(s.Summaries, 1))
}

func memoryTarget(base *Memory, s, smaller *Scale) Target {
	t := Target{Name: "Memory", Goal: fmt.Sprintf("linear in the fleet (each added cluster costs at most %.2fx what the smaller fleet's did), bytes per cluster stated", MemoryLinearSlack), Scale: s.Clusters}
	m := s.Memory
	if m == nil || m.HeapBytes == 0 {
		t.Measured = "not measured"
		return t
	}
	perCluster, perSummary := PerCluster(base, s)
	t.Measured = fmt.Sprintf("heap %s, RSS %s", Bytes(float64(m.HeapBytes)), Bytes(float64(m.RSSBytes)))
	if base != nil {
		t.Measured += fmt.Sprintf("; above the %s baseline: %s per cluster, %s per summary", Bytes(float64(base.HeapBytes)), Bytes(perCluster), Bytes(perSummary))
	} else {
		t.Measured += fmt.Sprintf("; %s per cluster, %s per summary (no baseline)", Bytes(perCluster), Bytes(perSummary))
	}
	if m.SummaryJSONBytes > 0 {
		t.Measured += fmt.Sprintf("; a summary is %s of JSON", Bytes(m.SummaryJSONBytes))
	}
	if base == nil || smaller == nil || smaller.Memory == nil || smaller.Memory.HeapBytes == 0 || smaller.Clusters == s.Clusters {
		t.Measured += "; linearity needs a baseline and two scales"
		return t
	}
	first, _ := PerCluster(base, smaller)
	added := float64(m.HeapBytes-smaller.Memory.HeapBytes) / float64(s.Clusters-smaller.Clusters)
	t.Measured += fmt.Sprintf("; the clusters from N=%d on cost %s each, the first %d %s each", smaller.Clusters, Bytes(added), smaller.Clusters, Bytes(first))
	t.Pass = verdict(added <= MemoryLinearSlack*first)
	return t
}

func workTarget(s *Scale) Target {
	t := Target{Name: "Work per source event", Goal: fmt.Sprintf("computations per affected cluster within [%.1f, %.1f] for every kind of event (counted)", WorkProportionalLo, WorkProportionalHi), Scale: s.Clusters}
	w := s.Work
	if w == nil {
		t.Measured = "not measured"
		return t
	}
	if !w.MetricFound {
		t.Measured = "periscope_clusterreadiness_computations_total is missing from /metrics"
		return t
	}
	var parts []string
	pass := len(w.Cases) > 0
	for _, c := range w.Cases {
		parts = append(parts, fmt.Sprintf("%s %.2f", c.Event, c.PerAffected))
		pass = pass && c.PerAffected >= WorkProportionalLo && c.PerAffected <= WorkProportionalHi
	}
	if s.Churn != nil {
		for _, st := range s.Churn.Steps {
			if st.Followed && st.ComputationsPerEvent >= 0 {
				parts = append(parts, fmt.Sprintf("churn at %g/s %.2f", st.TargetRate, st.ComputationsPerEvent))
				pass = pass && st.ComputationsPerEvent >= WorkProportionalLo && st.ComputationsPerEvent <= WorkProportionalHi
			}
		}
	}
	t.Measured = strings.Join(parts, "; ")
	t.Pass = verdict(pass)
	return t
}

// Ms formats milliseconds for a table: 0.42 ms, 12.3 ms, 345 ms, 1.23 s.
func Ms(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

// Nanos formats a duration in nanoseconds for a table: 81 ns, 16.5 µs, 12.3 ms, 1.23 s.
func Nanos(v float64) string {
	switch {
	case v >= 1e6:
		return Ms(v / 1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f µs", v/1e3)
	}
	return fmt.Sprintf("%.0f ns", v)
}

// Bytes formats a size: 812 B, 3.4 KiB, 12.5 MiB, 1.20 GiB.
func Bytes(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}
