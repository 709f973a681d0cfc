package measure

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"periscope.dev/periscope/test/bench/fixtures"
	"periscope.dev/periscope/test/bench/results"
	"periscope.dev/periscope/test/bench/stats"
)

// NotifyConfig sizes the notification measurement.
type NotifyConfig struct {
	Samples      int
	PollInterval time.Duration
	// Seed draws the phase of the modelled poller.
	Seed uint64
}

// Notify measures, per sample, the time from patching a cluster's last pending ClusterSummary
// to Provisioned until a watcher of its ClusterReadiness (through kube-apiserver) sees
// Ready=True, and until a watcher of the summary on kube-apiserver sees the patch: the floor.
// Each sample restores the summary afterwards and waits until the cluster is not Ready again.
//
// The polling alternative is modelled from measured parts rather than run (200 samples of a
// 10-second poll would take over half an hour): see pollingModel. summaryListMs are the
// durations of listing every ClusterSummary, from the list measurement.
func (e *Env) Notify(ctx context.Context, f Fleet, cfg NotifyConfig, summaryListMs []float64) (*results.Notify, error) {
	if len(f.Candidates) == 0 {
		return nil, fmt.Errorf("no cluster is one summary away from Ready")
	}
	out := &results.Notify{PollIntervalSeconds: cfg.PollInterval.Seconds(), PollingModel: pollingModel(cfg.PollInterval)}
	for i := 0; i < cfg.Samples; i++ {
		c := f.Candidates[i%len(f.Candidates)]
		toReady, toSummary, err := e.notifyOnce(ctx, c)
		if err != nil {
			return out, fmt.Errorf("sample %d (%s): %w", i, c.Key(), err)
		}
		p, fl := stats.Millis([]time.Duration{toReady})[0], stats.Millis([]time.Duration{toSummary})[0]
		out.PeriscopeMs = append(out.PeriscopeMs, p)
		out.FloorMs = append(out.FloorMs, fl)
		out.AddedMs = append(out.AddedMs, p-fl)
		out.Samples++
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9011))
	intervalMs := stats.Millis([]time.Duration{cfg.PollInterval})[0]
	for i, fl := range out.FloorMs {
		list := 0.0
		if len(summaryListMs) > 0 {
			list = summaryListMs[i%len(summaryListMs)]
		}
		out.PollingMs = append(out.PollingMs, fl+rng.Float64()*intervalMs+list)
	}
	if len(summaryListMs) == 0 {
		out.PollingModel += " The list duration was not measured in this run and is left out."
	}
	out.Periscope, out.Floor = stats.Summarize(out.PeriscopeMs), stats.Summarize(out.FloorMs)
	out.Added, out.Polling = stats.Summarize(out.AddedMs), stats.Summarize(out.PollingMs)
	e.Logf("notify: %d samples; Periscope median %.1fms p99 %.1fms; floor median %.1fms p99 %.1fms; added p99 %.1fms",
		out.Samples, out.Periscope.Median, out.Periscope.P99, out.Floor.Median, out.Floor.P99, out.Added.P99)
	return out, nil
}

func pollingModel(interval time.Duration) string {
	return fmt.Sprintf("a script that lists `clustersummaries -A` every %v sees a change at its first list after the change is stored. "+
		"Per sample: the floor latency of that sample, plus a wait drawn uniformly from [0, %v) (the change lands at a random point of the poll cycle; fixed seed), "+
		"plus the duration of one such list as measured in section 2 at this scale (cycling through its samples).", interval, interval)
}

// notifyOnce runs one sample and restores the summary.
func (e *Env) notifyOnce(ctx context.Context, c Candidate) (toReady, toSummary time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	crW, err := e.Dynamic.Resource(ClusterReadinesses).Namespace(c.Namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + c.Name})
	if err != nil {
		return 0, 0, fmt.Errorf("watch the ClusterReadiness: %w", err)
	}
	defer crW.Stop()
	sumW, err := e.Dynamic.Resource(fixtures.ClusterSummaries).Namespace(c.Namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + c.Summary.Name})
	if err != nil {
		return 0, 0, fmt.Errorf("watch the ClusterSummary: %w", err)
	}
	defer sumW.Stop()

	// Both watches start with the current state.
	ready, _, err := nextObject(ctx, crW)
	if err != nil {
		return 0, 0, err
	}
	if ready {
		return 0, 0, fmt.Errorf("the cluster is Ready before its pending summary is changed")
	}
	if _, _, err := nextObject(ctx, sumW); err != nil {
		return 0, 0, err
	}

	start := time.Now()
	if err := e.setSummary(ctx, c.Summary, fixtures.StatusProvisioned); err != nil {
		return 0, 0, err
	}
	var readyAt, summaryAt time.Time
	for readyAt.IsZero() || summaryAt.IsZero() {
		select {
		case ev, ok := <-crW.ResultChan():
			now := time.Now()
			if !ok || ev.Type == watch.Error {
				return 0, 0, fmt.Errorf("the ClusterReadiness watch ended: %v", ev.Object)
			}
			if r, isObj := readyOf(ev); isObj && r && readyAt.IsZero() {
				readyAt = now
			}
		case ev, ok := <-sumW.ResultChan():
			now := time.Now()
			if !ok || ev.Type == watch.Error {
				return 0, 0, fmt.Errorf("the ClusterSummary watch ended: %v", ev.Object)
			}
			if ev.Type == watch.Modified && summaryAt.IsZero() {
				summaryAt = now
			}
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("no Ready=True within a minute (summary seen: %v): %w", !summaryAt.IsZero(), ctx.Err())
		}
	}

	if err := e.setSummary(ctx, c.Summary, fixtures.StatusProvisioning); err != nil {
		return 0, 0, err
	}
	for {
		r, _, err := nextObject(ctx, crW)
		if err != nil {
			return 0, 0, fmt.Errorf("waiting for the cluster to be not Ready again: %w", err)
		}
		if !r {
			break
		}
	}
	return readyAt.Sub(start), summaryAt.Sub(start), nil
}

// readyOf returns status.ready of a watch event's object; isObject is false for bookmarks.
func readyOf(ev watch.Event) (ready, isObject bool) {
	if ev.Type == watch.Bookmark {
		return false, false
	}
	u, ok := ev.Object.(*unstructured.Unstructured)
	if !ok {
		return false, false
	}
	r, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
	return r, true
}

// nextObject waits for the next event that carries an object (bookmarks are skipped).
func nextObject(ctx context.Context, w watch.Interface) (ready bool, u *unstructured.Unstructured, err error) {
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return false, nil, fmt.Errorf("watch ended: %v", ev.Object)
			}
			if r, isObj := readyOf(ev); isObj {
				u, _ := ev.Object.(*unstructured.Unstructured)
				return r, u, nil
			}
		case <-ctx.Done():
			return false, nil, ctx.Err()
		}
	}
}
