package measure

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"periscope.dev/periscope/test/bench/fixtures"
	"periscope.dev/periscope/test/bench/proc"
	"periscope.dev/periscope/test/bench/results"
)

// Quiesce waits until Periscope's computations counter has not moved for quiet (at most
// timeout); without the counter it just waits quiet.
func (e *Env) Quiesce(ctx context.Context, quiet, timeout time.Duration) error {
	last, found, err := e.Computations(ctx)
	if err != nil {
		return err
	}
	if !found {
		time.Sleep(quiet)
		return nil
	}
	deadline := time.Now().Add(timeout)
	stable := time.Now()
	for time.Since(stable) < quiet {
		if time.Now().After(deadline) {
			return fmt.Errorf("Periscope still computing after %v", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		n, _, err := e.Computations(ctx)
		if err != nil {
			return err
		}
		if n != last {
			last, stable = n, time.Now()
		}
	}
	return nil
}

// WorkConfig sizes the work measurement.
type WorkConfig struct {
	// Clusters is how many clusters the summary and cluster cases change.
	Clusters int
	// Region is the region whose profiles the profile cases change.
	Region, OtherRegion string
}

// Work counts Periscope's computations per kind of source event against the clusters each
// event can affect, read from periscope_clusterreadiness_computations_total. Every change is
// undone, so the fleet ends as generated.
func (e *Env) Work(ctx context.Context, f Fleet, cfg WorkConfig) (*results.Work, error) {
	_, found, err := e.Computations(ctx)
	if err != nil {
		return nil, err
	}
	out := &results.Work{MetricFound: found}
	if !found {
		e.Logf("work: %s is missing from Periscope's /metrics; nothing to count", ComputationsMetric)
		return out, nil
	}
	matched := map[string]int{}
	for _, m := range f.ProfileMatches {
		matched[m.Name] = m.Clusters
	}
	cands := f.Candidates[:min(cfg.Clusters, len(f.Candidates))]
	dns, other := "region-"+cfg.Region+"-dns", "region-"+cfg.OtherRegion+"-dns"
	cases := []struct {
		name     string
		events   int
		affected int // per event
		steps    []func(context.Context) error
	}{
		{"ClusterSummary status", 2 * len(cands), 1, e.concurrently(cands,
			func(ctx context.Context, c Candidate) error {
				return e.setSummary(ctx, c.Summary, fixtures.StatusProvisioned)
			},
			func(ctx context.Context, c Candidate) error {
				return e.setSummary(ctx, c.Summary, fixtures.StatusProvisioning)
			})},
		{"cluster labels", 2 * len(cands), 1, e.concurrently(cands,
			func(ctx context.Context, c Candidate) error { return e.labelCluster(ctx, c, "true") },
			func(ctx context.Context, c Candidate) error { return e.labelCluster(ctx, c, "") })},
		{fmt.Sprintf("ClusterProfile %s, chart version (%d clusters)", dns, matched[dns]), 2, matched[dns],
			e.profileEdit(dns, []interface{}{"spec", "helmCharts", 0, "chartVersion"}, "0.0.0-bench")},
		{"ClusterProfile platform-cert-manager, chart version (every cluster)", 2, matched["platform-cert-manager"],
			e.profileEdit("platform-cert-manager", []interface{}{"spec", "helmCharts", 0, "chartVersion"}, "0.0.0-bench")},
		{fmt.Sprintf("ClusterProfile %s, selector moved to %s and back", dns, cfg.OtherRegion), 2, matched[dns] + matched[other],
			e.profileEdit(dns, []interface{}{"spec", "clusterSelector", "matchExpressions", 0, "values", 0}, cfg.OtherRegion)},
	}
	pid, err := e.PeriscopePID()
	if err != nil {
		return out, err
	}
	// Waiting for Periscope to finish reads its /metrics several times a second, which costs
	// Periscope CPU; that cost is measured here and subtracted from each case.
	perScrape, err := e.scrapeCPU(ctx, pid, 30)
	if err != nil {
		return out, err
	}
	for _, c := range cases {
		if err := e.Quiesce(ctx, 500*time.Millisecond, time.Minute); err != nil {
			return out, err
		}
		comp0, _, err := e.Computations(ctx)
		if err != nil {
			return out, err
		}
		cpu0, err := proc.CPU(pid)
		if err != nil {
			return out, err
		}
		scrapes0 := e.scrapes.Load()
		// Each step is one event per cluster of the case (a batch of distinct clusters, or
		// one profile change); Periscope is let finish between steps so that a change and its
		// undoing are not folded into one computation.
		for _, step := range c.steps {
			if err := step(ctx); err != nil {
				return out, fmt.Errorf("%s: %w", c.name, err)
			}
			if err := e.Quiesce(ctx, 500*time.Millisecond, time.Minute); err != nil {
				return out, err
			}
		}
		comp1, _, err := e.Computations(ctx)
		if err != nil {
			return out, err
		}
		cpu1, err := proc.CPU(pid)
		if err != nil {
			return out, err
		}
		cpu := (cpu1 - cpu0).Seconds() - float64(e.scrapes.Load()-scrapes0)*perScrape
		wc := results.WorkCase{
			Event: c.name, Events: c.events, Affected: c.events * c.affected, Computations: int64(comp1 - comp0),
			CPUSecondsPerEvent: max(cpu, 0) / float64(max(c.events, 1)),
		}
		if wc.Affected > 0 {
			wc.PerAffected = float64(wc.Computations) / float64(wc.Affected)
		}
		e.Logf("work: %s: %d events, %d affected, %d computations (%.2f per affected cluster)", wc.Event, wc.Events, wc.Affected, wc.Computations, wc.PerAffected)
		out.Cases = append(out.Cases, wc)
	}
	return out, nil
}

// scrapeCPU returns the CPU seconds Periscope spends on one read of its /metrics, from n reads.
func (e *Env) scrapeCPU(ctx context.Context, pid, n int) (float64, error) {
	if err := e.Quiesce(ctx, 500*time.Millisecond, time.Minute); err != nil {
		return 0, err
	}
	cpu0, err := proc.CPU(pid)
	if err != nil {
		return 0, err
	}
	for range n {
		if _, err := e.Metrics(ctx); err != nil {
			return 0, err
		}
	}
	cpu1, err := proc.CPU(pid)
	if err != nil {
		return 0, err
	}
	per := (cpu1 - cpu0).Seconds() / float64(n)
	e.Logf("work: a read of /metrics costs Periscope %.2fms of CPU", per*1000)
	return per, nil
}

// concurrently returns two steps: do on every candidate at once, then undo on every one.
func (e *Env) concurrently(cands []Candidate, do, undo func(context.Context, Candidate) error) []func(context.Context) error {
	all := func(f func(context.Context, Candidate) error) func(context.Context) error {
		return func(ctx context.Context) error {
			errs := make(chan error, len(cands))
			var wg sync.WaitGroup
			for _, c := range cands {
				wg.Go(func() { errs <- f(ctx, c) })
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					return err
				}
			}
			return nil
		}
	}
	return []func(context.Context) error{all(do), all(undo)}
}

// labelCluster sets (or with "" removes) a label on the candidate's cluster object.
func (e *Env) labelCluster(ctx context.Context, c Candidate, value string) error {
	var v interface{}
	if value != "" {
		v = value
	}
	patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{"labels": map[string]interface{}{"bench.periscope.dev/touched": v}}})
	if err != nil {
		return fmt.Errorf("label patch: %w", err)
	}
	if _, err := e.Dynamic.Resource(c.Resource).Namespace(c.Namespace).Patch(ctx, c.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("label %s %s: %w", c.Resource.Resource, c.Key(), err)
	}
	return nil
}

// profileEdit returns two steps: set the field of the named ClusterProfile at path (keys and
// list indexes) to value, and set it back to what it was.
func (e *Env) profileEdit(name string, path []interface{}, value string) []func(context.Context) error {
	var old interface{}
	pointer := ""
	for _, p := range path {
		pointer += fmt.Sprintf("/%v", p)
	}
	set := func(v func() interface{}) func(context.Context) error {
		return func(ctx context.Context) error {
			patch, err := json.Marshal([]map[string]interface{}{{"op": "replace", "path": pointer, "value": v()}})
			if err != nil {
				return fmt.Errorf("profile patch: %w", err)
			}
			if _, err := e.Dynamic.Resource(fixtures.ClusterProfiles).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("patch clusterprofile %s: %w", name, err)
			}
			return nil
		}
	}
	read := func(ctx context.Context) error {
		u, err := e.Dynamic.Resource(fixtures.ClusterProfiles).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get clusterprofile %s: %w", name, err)
		}
		var cur interface{} = u.Object
		for _, p := range path {
			switch k := p.(type) {
			case string:
				m, _ := cur.(map[string]interface{})
				cur = m[k]
			case int:
				l, _ := cur.([]interface{})
				if k >= len(l) {
					return fmt.Errorf("clusterprofile %s has no %s", name, pointer)
				}
				cur = l[k]
			}
		}
		if cur == nil {
			return fmt.Errorf("clusterprofile %s has no %s", name, pointer)
		}
		old = cur
		return nil
	}
	forward := set(func() interface{} { return value })
	return []func(context.Context) error{
		func(ctx context.Context) error {
			if err := read(ctx); err != nil {
				return err
			}
			return forward(ctx)
		},
		set(func() interface{} { return old }),
	}
}
