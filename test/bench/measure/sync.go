package measure

import (
	"context"
	"fmt"
	"time"

	"periscope.dev/periscope/test/bench/proc"
	"periscope.dev/periscope/test/bench/results"
	"periscope.dev/periscope/test/bench/stats"
)

// Sync restarts Periscope `starts` times with the fleet present and measures, each time, the
// time from the process's start to /readyz (which passes once the sources are synced and every
// ClusterReadiness is computed) and the CPU used until then. After the last start it checks,
// through kube-apiserver, that every cluster is listed with the Ready state the fixtures give.
func (e *Env) Sync(ctx context.Context, f Fleet, starts int) (*results.Sync, error) {
	out := &results.Sync{}
	var ready, cpu []float64
	for i := 0; i < starts; i++ {
		pid, started, err := e.StartPeriscope(ctx)
		if err != nil {
			return out, err
		}
		readyAt := time.Now()
		used, err := proc.CPU(pid)
		if err != nil {
			return out, err
		}
		served, err := e.waitListed(ctx, f.Clusters, 5*time.Minute)
		if err != nil {
			return out, err
		}
		s := results.SyncSample{
			ReadySeconds: readyAt.Sub(started).Seconds(), CPUSeconds: used.Seconds(),
			ServedSeconds: served.Sub(started).Seconds(),
		}
		e.Logf("sync %d/%d: ready in %.2fs, %.2fs CPU, served through kube-apiserver after %.2fs", i+1, starts, s.ReadySeconds, s.CPUSeconds, s.ServedSeconds)
		out.Samples = append(out.Samples, s)
		ready = append(ready, s.ReadySeconds)
		cpu = append(cpu, s.CPUSeconds)
	}
	out.ReadySeconds, out.CPUSeconds = stats.Summarize(ready), stats.Summarize(cpu)
	_, items, err := e.listReadiness(ctx)
	if err != nil {
		return out, err
	}
	out.Listed = len(items)
	for _, it := range items {
		if it.Status.Ready {
			out.ListedReady++
		}
	}
	if out.Listed != f.Clusters || out.ListedReady != f.ExpectedReady {
		return out, fmt.Errorf("after sync Periscope lists %d clusters, %d Ready; the fixtures have %d, %d Ready", out.Listed, out.ListedReady, f.Clusters, f.ExpectedReady)
	}
	return out, nil
}

// StartPeriscope (re)starts Periscope and waits for /readyz. It returns the new PID and when
// the process started (from /proc, at a resolution of 10ms).
func (e *Env) StartPeriscope(ctx context.Context) (int, time.Time, error) {
	pid, err := e.Plane.Restart(ctx, "periscope")
	if err != nil {
		return 0, time.Time{}, err
	}
	ago, err := proc.StartedAgo(pid)
	if err != nil {
		return 0, time.Time{}, err
	}
	started := time.Now().Add(-ago)
	return pid, started, e.waitReadyz(ctx, pid, 10*time.Minute)
}

// waitReadyz polls Periscope's /readyz until it passes. It fails early if the process exits.
func (e *Env) waitReadyz(ctx context.Context, pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := e.Periscope.Get().AbsPath("/readyz").DoRaw(rctx)
		cancel()
		if err == nil {
			return nil
		}
		if _, perr := proc.CPU(pid); perr != nil {
			return fmt.Errorf("periscope (pid %d) exited before it was ready: %w", pid, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("periscope not ready after %v: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitListed waits until a list through kube-apiserver returns n clusters, and returns when.
func (e *Env) waitListed(ctx context.Context, n int, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		_, items, err := e.listReadiness(ctx)
		if err == nil && len(items) == n {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("a list through kube-apiserver did not return %d clusters within %v (got %d, %v)", n, timeout, len(items), err)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
