package measure

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"periscope.dev/periscope/test/bench/proc"
	"periscope.dev/periscope/test/bench/results"
)

// Memory reads Periscope's resident memory and live heap. The heap profile endpoint collects
// garbage first (gc=1), so the heap read right after it is what is live; the profile itself is
// saved to profilePath for `go tool pprof`.
func (e *Env) Memory(ctx context.Context, f Fleet, profilePath string) (*results.Memory, error) {
	pid, err := e.PeriscopePID()
	if err != nil {
		return nil, err
	}
	profile, err := e.Periscope.Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("get Periscope's heap profile: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(profilePath), 0o755); err != nil {
		return nil, fmt.Errorf("save the heap profile: %w", err)
	}
	if err := os.WriteFile(profilePath, profile, 0o644); err != nil {
		return nil, fmt.Errorf("save the heap profile: %w", err)
	}
	m, err := e.Metrics(ctx)
	if err != nil {
		return nil, err
	}
	rss, err := proc.RSS(pid)
	if err != nil {
		return nil, err
	}
	out := &results.Memory{
		RSSBytes: rss, HeapBytes: int64(m["go_memstats_heap_alloc_bytes"]), Goroutines: m["go_goroutines"],
		HeapProfile: profilePath,
	}
	if out.HeapBytes == 0 {
		return out, fmt.Errorf("go_memstats_heap_alloc_bytes missing from Periscope's /metrics")
	}
	if f.Clusters > 0 {
		out.HeapPerCluster = float64(out.HeapBytes) / float64(f.Clusters)
		out.RSSPerCluster = float64(out.RSSBytes) / float64(f.Clusters)
	}
	if f.Summaries > 0 {
		out.HeapPerSummary = float64(out.HeapBytes) / float64(f.Summaries)
	}
	return out, nil
}

// CPUProfile records Periscope's CPU profile for d and saves it to path for `go tool pprof`.
func (e *Env) CPUProfile(ctx context.Context, d time.Duration, path string) error {
	seconds := max(int(d.Round(time.Second)/time.Second), 1)
	profile, err := e.Periscope.Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(seconds)).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("get Periscope's CPU profile: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save the CPU profile: %w", err)
	}
	if err := os.WriteFile(path, profile, 0o644); err != nil {
		return fmt.Errorf("save the CPU profile: %w", err)
	}
	return nil
}
