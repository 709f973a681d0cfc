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
	"periscope.dev/periscope/test/bench/results"
	"periscope.dev/periscope/test/bench/stats"
)

// FanOutConfig sizes the fan-out measurement.
type FanOutConfig struct {
	Watchers int
	Rounds   int
	// Connections is how many clients, each with connections of its own, share the watchers.
	Connections int
	// RoundTimeout bounds the wait for every watcher to get a change.
	RoundTimeout time.Duration
}

type arrival struct {
	watcher int
	at      time.Time
	key     string
	ready   bool
}

// FanOut opens many watches of every ClusterReadiness through kube-apiserver, from the current
// resourceVersion (so there are no initial events), then changes one cluster per round and
// measures when each watcher gets the change.
func (e *Env) FanOut(ctx context.Context, f Fleet, cfg FanOutConfig) (*results.FanOut, error) {
	if len(f.Candidates) == 0 {
		return nil, fmt.Errorf("no cluster is one summary away from Ready")
	}
	c := f.Candidates[len(f.Candidates)-1]
	list, err := e.Dynamic.Resource(ClusterReadinesses).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("list clusterreadinesses: %w", err)
	}
	rv := list.GetResourceVersion()

	clients := make([]dynamic.Interface, max(cfg.Connections, 1))
	for i := range clients {
		if clients[i], err = dynamic.NewForConfig(localcp.OwnConnections(e.Admin)); err != nil {
			return nil, fmt.Errorf("client %d: %w", i, err)
		}
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	arrivals := make(chan arrival, 4*cfg.Watchers)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()

	// Open the watches, a few at a time.
	start := time.Now()
	watches := make([]watch.Interface, cfg.Watchers)
	errs := make(chan error, cfg.Watchers)
	sem := make(chan struct{}, 32)
	var open sync.WaitGroup
	for i := range watches {
		open.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			w, err := clients[i%len(clients)].Resource(ClusterReadinesses).Watch(wctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				errs <- fmt.Errorf("watch %d: %w", i, err)
				return
			}
			watches[i] = w
		})
	}
	open.Wait()
	close(errs)
	if err := <-errs; err != nil {
		for _, w := range watches {
			if w != nil {
				w.Stop()
			}
		}
		return nil, err
	}
	out := &results.FanOut{Watchers: cfg.Watchers, SetupSeconds: time.Since(start).Seconds()}
	e.Logf("fan-out: %d watches open in %.1fs", cfg.Watchers, out.SetupSeconds)
	for i, w := range watches {
		wg.Go(func() {
			defer w.Stop()
			for {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					now := time.Now()
					if ev.Type == watch.Bookmark || ev.Type == watch.Error {
						continue
					}
					u, ok := ev.Object.(*unstructured.Unstructured)
					if !ok {
						continue
					}
					r, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
					select {
					case arrivals <- arrival{watcher: i, at: now, key: u.GetNamespace() + "/" + u.GetName(), ready: r}:
					case <-wctx.Done():
						return
					}
				case <-wctx.Done():
					return
				}
			}
		})
	}

	provisioned := false
	defer func() {
		if provisioned { // leave the fleet as generated
			if err := e.setSummary(context.WithoutCancel(ctx), c.Summary, fixtures.StatusProvisioning); err != nil {
				e.Logf("fan-out: restoring %s: %v", c.Key(), err)
			}
		}
	}()
	var all []float64
	for r := 0; r < cfg.Rounds; r++ {
		time.Sleep(time.Second) // let the previous round's stragglers settle
		provisioned = r%2 == 0
		status := fixtures.StatusProvisioning
		if provisioned {
			status = fixtures.StatusProvisioned
		}
		sent := time.Now()
		if err := e.setSummary(ctx, c.Summary, status); err != nil {
			return out, err
		}
		got := make([]bool, cfg.Watchers)
		var latencies []float64
		timeout := time.After(cfg.RoundTimeout)
	collect:
		for len(latencies) < cfg.Watchers {
			select {
			case a := <-arrivals:
				if a.key == c.Key() && a.ready == provisioned && !got[a.watcher] {
					got[a.watcher] = true
					latencies = append(latencies, stats.Millis([]time.Duration{a.at.Sub(sent)})[0])
				}
			case <-timeout:
				break collect
			case <-ctx.Done():
				return out, ctx.Err()
			}
		}
		round := results.FanOutRound{LatenciesMs: latencies, Ms: stats.Summarize(latencies), Missing: cfg.Watchers - len(latencies)}
		e.Logf("fan-out round %d: median %.1fms, p99 %.1fms, max %.1fms, %d missing", r+1, round.Ms.Median, round.Ms.P99, round.Ms.Max, round.Missing)
		out.Rounds = append(out.Rounds, round)
		all = append(all, latencies...)
	}
	out.Ms = stats.Summarize(all)
	return out, nil
}
