package measure

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"periscope.dev/periscope/test/bench/fixtures"
	"periscope.dev/periscope/test/bench/localcp"
	"periscope.dev/periscope/test/bench/proc"
	"periscope.dev/periscope/test/bench/results"
	"periscope.dev/periscope/test/bench/stats"
)

// ChurnConfig sizes the churn measurement.
type ChurnConfig struct {
	// Rates are the changes per second to try, in increasing order; the measurement stops at
	// the first rate Periscope does not follow.
	Rates []float64
	Step  time.Duration
	// LagBound is the p99 lag under which a rate counts as followed.
	LagBound time.Duration
	// Drain is how long, after a step, changes may still arrive before they count as
	// unresolved.
	Drain time.Duration
	// Senders is how many patches may be in flight at once.
	Senders int
}

// churnCluster is the state of one candidate during the churn.
type churnCluster struct {
	c Candidate
	// provisioned is the state of its pending summary as last patched (or being patched).
	provisioned bool
	// inFlight is set from sending a patch until Periscope shows its effect.
	inFlight bool
	sentAt   time.Time
}

type churn struct {
	e        *Env
	mu       sync.Mutex
	clusters []*churnCluster
	byKey    map[string]*churnCluster
	cursor   int
	lags     []float64
}

// Churn patches pending summaries at increasing rates, each patch flipping a cluster between
// Ready and not, and measures the lag until a watcher of every ClusterReadiness (through
// kube-apiserver) shows the flip, with Periscope's CPU per 1,000 source events.
func (e *Env) Churn(ctx context.Context, f Fleet, cfg ChurnConfig) (*results.Churn, error) {
	if len(f.Candidates) == 0 {
		return nil, fmt.Errorf("no cluster is one summary away from Ready")
	}
	ch := &churn{e: e, byKey: map[string]*churnCluster{}}
	for _, c := range f.Candidates {
		cc := &churnCluster{c: c}
		ch.clusters = append(ch.clusters, cc)
		ch.byKey[c.Key()] = cc
	}
	defer ch.restore(context.WithoutCancel(ctx), cfg.Senders)

	// One watcher of everything, on a connection of its own.
	client, err := dynamic.NewForConfig(localcp.OwnConnections(e.Admin))
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	list, err := client.Resource(ClusterReadinesses).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("list clusterreadinesses: %w", err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w, err := client.Resource(ClusterReadinesses).Watch(wctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion(), AllowWatchBookmarks: true})
	if err != nil {
		return nil, fmt.Errorf("watch clusterreadinesses: %w", err)
	}
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		ch.observe(w)
	}()
	defer func() { stop(); w.Stop(); <-watchDone }()

	pid, err := e.PeriscopePID()
	if err != nil {
		return nil, err
	}
	out := &results.Churn{LagBoundMs: stats.Millis([]time.Duration{cfg.LagBound})[0], StepSeconds: cfg.Step.Seconds()}
	for _, rate := range cfg.Rates {
		st, err := ch.step(ctx, pid, rate, cfg)
		if err != nil {
			return out, err
		}
		select {
		case <-watchDone:
			return out, fmt.Errorf("the ClusterReadiness watch ended during the churn")
		default:
		}
		out.Steps = append(out.Steps, st)
		e.Logf("churn %g/s: sent %.0f/s, lag median %.1fms p99 %.1fms, %d unresolved, %d skipped, %d saturated, %.2f CPU s per 1000 events, followed %v",
			rate, st.AchievedRate, st.LagMs.Median, st.LagMs.P99, st.Unresolved, st.Skipped, st.Saturated, st.CPUPer1000, st.Followed)
		if !st.Followed {
			out.SourceLimited = st.Saturated > 0 && st.Unresolved == 0 && st.LagMs.P99 <= out.LagBoundMs
			break
		}
		out.MaxFollowedRate = rate
	}
	return out, nil
}

// observe records, for every change that shows a cluster in the state its last patch wants,
// the lag since the patch was sent.
func (ch *churn) observe(w watch.Interface) {
	for ev := range w.ResultChan() {
		now := time.Now()
		if ev.Type == watch.Error {
			return
		}
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || ev.Type == watch.Bookmark {
			continue
		}
		ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
		ch.mu.Lock()
		if cc := ch.byKey[u.GetNamespace()+"/"+u.GetName()]; cc != nil && cc.inFlight && ready == cc.provisioned {
			cc.inFlight = false
			ch.lags = append(ch.lags, stats.Millis([]time.Duration{now.Sub(cc.sentAt)})[0])
		}
		ch.mu.Unlock()
	}
}

// pick takes the next cluster that has no change in flight and marks it, or returns nil.
func (ch *churn) pick() *churnCluster {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	for range ch.clusters {
		cc := ch.clusters[ch.cursor]
		ch.cursor = (ch.cursor + 1) % len(ch.clusters)
		if !cc.inFlight {
			cc.inFlight = true
			cc.provisioned = !cc.provisioned
			return cc
		}
	}
	return nil
}

func (ch *churn) step(ctx context.Context, pid int, rate float64, cfg ChurnConfig) (results.ChurnStep, error) {
	st := results.ChurnStep{TargetRate: rate, ComputationsPerEvent: -1}
	ch.mu.Lock()
	ch.lags = nil
	ch.mu.Unlock()
	cpu0, err := proc.CPU(pid)
	if err != nil {
		return st, err
	}
	comp0, found, err := ch.e.Computations(ctx)
	if err != nil {
		return st, err
	}

	work := make(chan *churnCluster, cfg.Senders)
	var mu sync.Mutex
	patches, errs := 0, 0
	var senders sync.WaitGroup
	for range cfg.Senders {
		senders.Go(func() {
			for cc := range work {
				status := fixtures.StatusProvisioning
				if cc.provisioned {
					status = fixtures.StatusProvisioned
				}
				ch.mu.Lock()
				cc.sentAt = time.Now()
				ch.mu.Unlock()
				err := ch.e.setSummary(ctx, cc.c.Summary, status)
				mu.Lock()
				if err != nil {
					errs++
				} else {
					patches++
				}
				mu.Unlock()
				if err != nil {
					ch.mu.Lock()
					cc.inFlight, cc.provisioned = false, !cc.provisioned
					ch.mu.Unlock()
				}
			}
		})
	}

	// Send at the rate: the i-th change is due at start + i/rate.
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	end := start.Add(cfg.Step)
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * interval)
		if !due.Before(end) {
			break
		}
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		cc := ch.pick()
		if cc == nil {
			st.Skipped++
			continue
		}
		select {
		case work <- cc:
		default: // every sender is busy: the source cannot go this fast
			st.Saturated++
			ch.mu.Lock()
			cc.inFlight, cc.provisioned = false, !cc.provisioned
			ch.mu.Unlock()
		}
	}
	close(work)
	senders.Wait()
	sendSeconds := time.Since(start).Seconds()

	// Drain: wait for the changes still in flight.
	deadline := time.Now().Add(cfg.Drain)
	for {
		ch.mu.Lock()
		inFlight := 0
		for _, cc := range ch.clusters {
			if cc.inFlight {
				inFlight++
			}
		}
		ch.mu.Unlock()
		if inFlight == 0 || time.Now().After(deadline) {
			st.Unresolved = inFlight
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cpu1, err := proc.CPU(pid)
	if err != nil {
		return st, err
	}
	comp1, _, err := ch.e.Computations(ctx)
	if err != nil {
		return st, err
	}
	ch.mu.Lock()
	st.LagMs = stats.Summarize(ch.lags)
	for _, cc := range ch.clusters { // give up on what did not arrive
		cc.inFlight = false
	}
	ch.mu.Unlock()

	st.Patches, st.Errors = patches, errs
	st.AchievedRate = float64(patches) / sendSeconds
	st.CPUSeconds = (cpu1 - cpu0).Seconds()
	if patches > 0 {
		st.CPUPer1000 = st.CPUSeconds / float64(patches) * 1000
		if found {
			st.ComputationsPerEvent = (comp1 - comp0) / float64(patches)
		}
	}
	st.Followed = st.Unresolved == 0 && st.Skipped == 0 && st.Errors == 0 && st.Saturated == 0 &&
		st.LagMs.P99 <= stats.Millis([]time.Duration{cfg.LagBound})[0] && st.AchievedRate >= 0.9*rate
	return st, nil
}

// restore patches every summary the churn left Provisioned back to Provisioning.
func (ch *churn) restore(ctx context.Context, senders int) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(senders, 1))
	ch.mu.Lock()
	var todo []*churnCluster
	for _, cc := range ch.clusters {
		if cc.provisioned {
			todo = append(todo, cc)
		}
	}
	ch.mu.Unlock()
	for _, cc := range todo {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := ch.e.setSummary(ctx, cc.c.Summary, fixtures.StatusProvisioning); err != nil {
				ch.e.Logf("churn: restoring %s: %v", cc.c.Key(), err)
			}
		})
	}
	wg.Wait()
}
