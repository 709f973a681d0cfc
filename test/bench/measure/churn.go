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

// Churn modes: what each change does.
const (
	// ChurnRetry reports a failed attempt on a pending summary, as Sveltos does while it
	// retries an add-on: every change shows in the ClusterReadiness (the feature's message),
	// no cluster changes Ready, so no Event is recorded.
	ChurnRetry = "retry"
	// ChurnReady flips a cluster between Ready and not with every change: the worst case, as
	// Periscope also records an Event for each.
	ChurnReady = "ready"
)

// ChurnConfig sizes the churn measurement.
type ChurnConfig struct {
	Mode string
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
	// ProfilePrefix, when set, saves Periscope's CPU profile of each step to
	// <prefix><rate>.pb.gz.
	ProfilePrefix string
}

// sent is a change sent and not yet shown by Periscope. want is the attempt (retry mode) or
// the Ready state (ready mode: 1 or 0) it makes the ClusterReadiness show.
type sent struct {
	want int
	at   time.Time
}

// churnCluster is the state of one candidate during the churn.
type churnCluster struct {
	c Candidate
	// sending is set while a patch request is out: one at a time per cluster, so that the
	// patches of a cluster apply in the order they were made.
	sending bool
	// pending are the changes Periscope has not shown yet; floorPending those a watcher of
	// the ClusterSummary on kube-apiserver has not seen yet.
	pending      []sent
	floorPending []sent
	attempt      int
	// provisioned is the state of the pending summary as last patched (ready mode).
	provisioned bool
}

type churn struct {
	e         *Env
	mode      string
	mu        sync.Mutex
	clusters  []*churnCluster
	byKey     map[string]*churnCluster
	bySummary map[string]*churnCluster
	cursor    int
	lags      []float64
	floorLags []float64
}

// Churn changes pending summaries at increasing rates and measures the lag until a watcher of
// every ClusterReadiness (through kube-apiserver) shows each change, with Periscope's CPU per
// 1,000 source events.
func (e *Env) Churn(ctx context.Context, f Fleet, cfg ChurnConfig) (*results.Churn, error) {
	if len(f.Candidates) == 0 {
		return nil, fmt.Errorf("no cluster is one summary away from Ready")
	}
	if cfg.Mode != ChurnRetry && cfg.Mode != ChurnReady {
		return nil, fmt.Errorf("unknown churn mode %q", cfg.Mode)
	}
	ch := &churn{e: e, mode: cfg.Mode, byKey: map[string]*churnCluster{}, bySummary: map[string]*churnCluster{}}
	for _, c := range f.Candidates {
		cc := &churnCluster{c: c}
		ch.clusters = append(ch.clusters, cc)
		ch.byKey[c.Key()] = cc
		ch.bySummary[c.Summary.Namespace+"/"+c.Summary.Name] = cc
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
		ch.observe(w, ch.byKey, ch.shown, func(cc *churnCluster) *[]sent { return &cc.pending }, &ch.lags)
	}()
	defer func() { stop(); w.Stop(); <-watchDone }()

	// The floor: a watcher of every ClusterSummary on kube-apiserver, on a connection of its own.
	floorClient, err := dynamic.NewForConfig(localcp.OwnConnections(e.Admin))
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	slist, err := floorClient.Resource(fixtures.ClusterSummaries).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("list clustersummaries: %w", err)
	}
	fw, err := floorClient.Resource(fixtures.ClusterSummaries).Watch(wctx, metav1.ListOptions{ResourceVersion: slist.GetResourceVersion(), AllowWatchBookmarks: true})
	if err != nil {
		return nil, fmt.Errorf("watch clustersummaries: %w", err)
	}
	floorDone := make(chan struct{})
	go func() {
		defer close(floorDone)
		ch.observe(fw, ch.bySummary, ch.shownBySummary, func(cc *churnCluster) *[]sent { return &cc.floorPending }, &ch.floorLags)
	}()
	defer func() { stop(); fw.Stop(); <-floorDone }()

	pid, err := e.PeriscopePID()
	if err != nil {
		return nil, err
	}
	out := &results.Churn{Mode: cfg.Mode, LagBoundMs: stats.Millis([]time.Duration{cfg.LagBound})[0], StepSeconds: cfg.Step.Seconds()}
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
			out.SourceLimited = st.Saturated > 0 && st.AchievedRate < 0.9*rate && st.Unresolved == 0 && st.LagMs.P99 <= out.LagBoundMs
			break
		}
		out.MaxFollowedRate = rate
	}
	return out, nil
}

// shown returns what a ClusterReadiness shows, in the terms of sent.want.
func (ch *churn) shown(u *unstructured.Unstructured) int {
	if ch.mode == ChurnReady {
		if ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready"); ready {
			return 1
		}
		return 0
	}
	attempt := 0
	profiles, _, _ := unstructured.NestedSlice(u.Object, "status", "profiles")
	for _, p := range profiles {
		pm, _ := p.(map[string]interface{})
		features, _, _ := unstructured.NestedSlice(pm, "features")
		for _, f := range features {
			fm, _ := f.(map[string]interface{})
			msg, _, _ := unstructured.NestedString(fm, "failureMessage")
			attempt = max(attempt, fixtures.AttemptOf(msg))
		}
	}
	return attempt
}

// shownBySummary returns what a ClusterSummary shows, in the terms of sent.want.
func (ch *churn) shownBySummary(u *unstructured.Unstructured) int {
	features, _, _ := unstructured.NestedSlice(u.Object, "status", "featureSummaries")
	attempt, provisioned := 0, 1
	for _, f := range features {
		fm, _ := f.(map[string]interface{})
		msg, _, _ := unstructured.NestedString(fm, "failureMessage")
		attempt = max(attempt, fixtures.AttemptOf(msg))
		if st, _, _ := unstructured.NestedString(fm, "status"); st != fixtures.StatusProvisioned {
			provisioned = 0
		}
	}
	if ch.mode == ChurnReady {
		return provisioned
	}
	return attempt
}

// observe records the lag of every change that an event of w shows: in retry mode the
// attempts up to the one shown (a later attempt supersedes an earlier one), in ready mode the
// flip to the state shown. byKey finds the cluster of an object, shown reads it, and pending
// picks the list of changes the watcher waits for.
func (ch *churn) observe(w watch.Interface, byKey map[string]*churnCluster, shown func(*unstructured.Unstructured) int,
	pending func(*churnCluster) *[]sent, lags *[]float64) {
	for ev := range w.ResultChan() {
		now := time.Now()
		if ev.Type == watch.Error {
			return
		}
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || ev.Type == watch.Bookmark {
			continue
		}
		ch.mu.Lock()
		if cc := byKey[u.GetNamespace()+"/"+u.GetName()]; cc != nil && len(*pending(cc)) > 0 {
			got := shown(u)
			p := pending(cc)
			kept := (*p)[:0]
			for _, s := range *p {
				if (ch.mode == ChurnRetry && s.want <= got) || (ch.mode == ChurnReady && s.want == got) {
					*lags = append(*lags, stats.Millis([]time.Duration{now.Sub(s.at)})[0])
					continue
				}
				kept = append(kept, s)
			}
			*p = kept
		}
		ch.mu.Unlock()
	}
}

// pick takes the next cluster that can take a change and marks it sending. When there is none,
// waiting tells whether some cluster waits for Periscope to show its last flip (ready mode),
// rather than for its patch request to return (the source is the limit).
func (ch *churn) pick() (cc *churnCluster, waiting bool) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	for range ch.clusters {
		cc := ch.clusters[ch.cursor]
		ch.cursor = (ch.cursor + 1) % len(ch.clusters)
		// In ready mode a flip must be shown before the next: a flip and its undoing could
		// otherwise fold into no change at all.
		if cc.sending {
			continue
		}
		if ch.mode == ChurnReady && len(cc.pending) > 0 {
			waiting = true
			continue
		}
		cc.sending = true
		return cc, false
	}
	return nil, waiting
}

// send makes the next change of cc and reports whether kube-apiserver took it.
func (ch *churn) send(ctx context.Context, cc *churnCluster) bool {
	ch.mu.Lock()
	var patch []byte
	var err error
	var s sent
	if ch.mode == ChurnRetry {
		cc.attempt++
		s.want = cc.attempt
		patch, err = cc.c.Summary.RetryPatch(cc.attempt)
	} else {
		cc.provisioned = !cc.provisioned
		status := fixtures.StatusProvisioning
		if cc.provisioned {
			status, s.want = fixtures.StatusProvisioned, 1
		}
		patch, err = cc.c.Summary.Patch(status)
	}
	s.at = time.Now()
	cc.pending = append(cc.pending, s)
	cc.floorPending = append(cc.floorPending, s)
	ch.mu.Unlock()
	if err == nil {
		err = ch.e.patchSummary(ctx, cc.c.Summary, patch)
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	cc.sending = false
	if err != nil { // the change was not made: nothing to wait for
		cc.pending = without(cc.pending, s)
		cc.floorPending = without(cc.floorPending, s)
		if ch.mode == ChurnReady {
			cc.provisioned = !cc.provisioned
		}
		return false
	}
	return true
}

func without(l []sent, s sent) []sent {
	for i := range l {
		if l[i] == s {
			return append(l[:i], l[i+1:]...)
		}
	}
	return l
}

func (ch *churn) inFlight() int {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	n := 0
	for _, cc := range ch.clusters {
		n += len(cc.pending)
	}
	return n
}

func (ch *churn) step(ctx context.Context, pid int, rate float64, cfg ChurnConfig) (results.ChurnStep, error) {
	st := results.ChurnStep{TargetRate: rate, ComputationsPerEvent: -1}
	ch.mu.Lock()
	ch.lags, ch.floorLags = nil, nil
	ch.mu.Unlock()
	cpu0, err := proc.CPU(pid)
	if err != nil {
		return st, err
	}
	comp0, found, err := ch.e.Computations(ctx)
	if err != nil {
		return st, err
	}
	profiled := make(chan struct{})
	if cfg.ProfilePrefix != "" {
		path := fmt.Sprintf("%s%g.pb.gz", cfg.ProfilePrefix, rate)
		go func() {
			defer close(profiled)
			if err := ch.e.CPUProfile(ctx, cfg.Step, path); err != nil {
				ch.e.Logf("churn: %v", err)
				return
			}
			st.CPUProfile = path
		}()
	} else {
		close(profiled)
	}

	work := make(chan *churnCluster, cfg.Senders)
	var mu sync.Mutex
	patches, errs := 0, 0
	var senders sync.WaitGroup
	for range cfg.Senders {
		senders.Go(func() {
			for cc := range work {
				ok := ch.send(ctx, cc)
				mu.Lock()
				if ok {
					patches++
				} else {
					errs++
				}
				mu.Unlock()
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
		cc, waiting := ch.pick()
		if cc == nil {
			if waiting {
				st.Skipped++
			} else {
				st.Saturated++
			}
			continue
		}
		select {
		case work <- cc:
		default: // every sender is busy: the source cannot go this fast
			st.Saturated++
			ch.mu.Lock()
			cc.sending = false
			ch.mu.Unlock()
		}
	}
	close(work)
	senders.Wait()
	sendSeconds := time.Since(start).Seconds()

	// Drain: wait for the changes not shown yet.
	deadline := time.Now().Add(cfg.Drain)
	for {
		n := ch.inFlight()
		if n == 0 || time.Now().After(deadline) {
			st.Unresolved = n
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cpu1, err := proc.CPU(pid)
	if err != nil {
		return st, err
	}
	<-profiled
	comp1, _, err := ch.e.Computations(ctx)
	if err != nil {
		return st, err
	}
	ch.mu.Lock()
	st.LagMs, st.FloorLagMs = stats.Summarize(ch.lags), stats.Summarize(ch.floorLags)
	for _, cc := range ch.clusters { // give up on what did not arrive
		cc.pending, cc.floorPending = nil, nil
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
	// Moments when every sender waits on kube-apiserver (saturated) do not fail a step by
	// themselves: only sending less than 90% of the rate does.
	st.Followed = st.Unresolved == 0 && st.Skipped == 0 && st.Errors == 0 &&
		st.LagMs.P99 <= stats.Millis([]time.Duration{cfg.LagBound})[0] && st.AchievedRate >= 0.9*rate
	return st, nil
}

// restore puts every summary the churn changed back as generated.
func (ch *churn) restore(ctx context.Context, senders int) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(senders, 1))
	ch.mu.Lock()
	var todo []*churnCluster
	for _, cc := range ch.clusters {
		if cc.attempt > 0 || cc.provisioned {
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
