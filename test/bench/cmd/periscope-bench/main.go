// Command periscope-bench runs the benchmarks of docs/benchmarks.md against a local control
// plane started by hack/local-up.sh (hack/bench.sh does both):
//
//	periscope-bench run [-local-dir DIR] [-out docs/benchmarks.json] [-markdown docs/benchmarks.md] [-micro FILE]
//	periscope-bench report [-in docs/benchmarks.json] [-out docs/benchmarks.md]
//
// run loads the fixtures of each scale (BENCH_SCALES), runs every measurement, and writes the
// JSON (after each measurement, so that a failure keeps what was measured) and the Markdown.
// report renders the Markdown again from the JSON.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"periscope.dev/periscope/test/bench/fixtures"
	"periscope.dev/periscope/test/bench/load"
	"periscope.dev/periscope/test/bench/localcp"
	"periscope.dev/periscope/test/bench/measure"
	"periscope.dev/periscope/test/bench/proc"
	"periscope.dev/periscope/test/bench/results"
)

func main() {
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: periscope-bench run|report [flags]")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "run":
		err = run(ctx, os.Args[2:])
	case "report":
		err = report(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want run or report", os.Args[1])
	}
	if err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

func report(args []string) error {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	in := fs.String("in", "docs/benchmarks.json", "the results")
	out := fs.String("out", "docs/benchmarks.md", "the Markdown to write")
	_ = fs.Parse(args)
	b, err := os.ReadFile(*in)
	if err != nil {
		return fmt.Errorf("read results: %w", err)
	}
	var r results.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("decode %s: %w", *in, err)
	}
	r.Targets = results.Evaluate(&r)
	return os.WriteFile(*out, []byte(results.Markdown(&r)), 0o644)
}

type runner struct {
	s        settings
	env      *measure.Env
	root     string
	out      string
	markdown string
	profiles string
	report   results.Report
	failed   bool
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	root, _ := os.Getwd()
	localDir := fs.String("local-dir", filepath.Join(root, "_output", "bench"), "the LOCAL_DIR of the running control plane")
	out := fs.String("out", "docs/benchmarks.json", "where to write the results")
	markdown := fs.String("markdown", "docs/benchmarks.md", "where to write the Markdown report (empty: none)")
	micro := fs.String("micro", "", "go test -bench output to include (optional)")
	profiles := fs.String("profiles", filepath.Join("_output", "bench", "profiles"), "where to save heap profiles")
	_ = fs.Parse(args)

	s, err := envSettings()
	if err != nil {
		return err
	}
	plane, err := localcp.Open(root, *localDir)
	if err != nil {
		return err
	}
	env, err := measure.NewEnv(plane, log.Printf)
	if err != nil {
		return err
	}
	r := &runner{s: s, env: env, root: root, out: *out, markdown: *markdown, profiles: *profiles}
	start := time.Now()
	r.report.Meta = r.meta(ctx, plane)
	if *micro != "" {
		if err := r.addMicro(*micro); err != nil {
			return err
		}
	}
	gen := func(n int) (*fixtures.Generator, error) {
		cfg := fixtures.DefaultConfig(n)
		cfg.Seed = s.Seed
		return fixtures.New(cfg)
	}
	loaded := 0
	for _, n := range s.Scales {
		g, err := gen(n)
		if err != nil {
			return err
		}
		if err := r.scale(ctx, g, loaded); err != nil {
			return err
		}
		loaded = n
		r.report.Meta.Seconds = time.Since(start).Seconds()
		if err := r.write(); err != nil {
			return err
		}
	}
	if r.failed {
		return errors.New("some measurements failed; see the errors in the report")
	}
	log.Printf("done in %.1f minutes", time.Since(start).Minutes())
	return nil
}

func (r *runner) meta(ctx context.Context, plane *localcp.Plane) results.Meta {
	m := results.Meta{
		Date: time.Now().UTC(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		Cores: runtime.NumCPU(), CPUModel: proc.CPUModel(), CRDSource: plane.Env("CRD_SOURCE"), Seed: r.s.Seed,
		Settings: r.s.raw,
	}
	m.MemoryBytes, _ = proc.MemTotal()
	if out, err := exec.CommandContext(ctx, "git", "-C", r.root, "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", r.root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		m.Dirty = len(strings.TrimSpace(string(out))) > 0
	}
	if v, err := r.env.Kube.Discovery().ServerVersion(); err == nil {
		m.KubeVersion = v.GitVersion
	}
	return m
}

func (r *runner) addMicro(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read micro-benchmarks: %w", err)
	}
	defer f.Close()
	m, err := results.ParseMicro(f)
	if err != nil {
		return err
	}
	r.report.Micro = m
	return nil
}

// write saves the JSON and the Markdown as they stand.
func (r *runner) write() error {
	r.report.Targets = results.Evaluate(&r.report)
	b, err := json.MarshalIndent(&r.report, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(r.out), 0o755); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := os.WriteFile(r.out, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if r.markdown == "" {
		return nil
	}
	return os.WriteFile(r.markdown, []byte(results.Markdown(&r.report)), 0o644)
}

// scale loads the clusters of g beyond the first `loaded` and runs every measurement. Only a
// failed load or sync stops the run; other failures are recorded and the run goes on.
func (r *runner) scale(ctx context.Context, g *fixtures.Generator, loaded int) error {
	n := g.Config().Clusters
	log.Printf("== N = %d", n)
	f := measure.Scan(g)
	sc := results.Scale{
		Clusters: n, Summaries: f.Summaries, ClusterProfiles: len(g.ClusterProfiles()), Bundles: g.Config().Bundles,
		BundleDeployments: g.Config().BundleDeployments, ExpectedReady: f.ExpectedReady, Candidates: len(f.Candidates),
	}
	r.report.Scales = append(r.report.Scales, sc)
	cur := &r.report.Scales[len(r.report.Scales)-1]
	fail := func(what string, err error) {
		log.Printf("N = %d: %s failed: %v", n, what, err)
		cur.Errors = append(cur.Errors, fmt.Sprintf("%s: %v", what, err))
		r.failed = true
	}
	// Loading competes for the cores with everything that watches the sources: Periscope is
	// stopped meanwhile, and the sync measurement starts it.
	if err := r.env.Plane.Stop(ctx, "periscope"); err != nil {
		return err
	}
	l, err := r.load(ctx, g, loaded)
	if err != nil {
		return err
	}
	cur.Load = l
	s, err := r.env.Sync(ctx, f, r.s.SyncStarts)
	cur.Sync = s
	if err != nil {
		fail("sync", err)
		return r.write()
	}
	if err := r.write(); err != nil {
		return err
	}

	steps := []struct {
		name string
		run  func() error
	}{
		{"memory", func() (err error) {
			cur.Memory, err = r.env.Memory(ctx, f, filepath.Join(r.profiles, fmt.Sprintf("heap-%d.pb.gz", n)))
			return err
		}},
		{"list", func() (err error) {
			cur.List, err = r.env.List(ctx, f, measure.ListConfig{
				Samples: r.s.ListSamples, MinSamples: r.s.ListMinSamples, Budget: r.s.ListBudget, Workers: r.s.LoadWorkers,
			})
			if cur.Memory != nil && cur.List != nil {
				if v := cur.List.Variant(results.VariantSummaries); v != nil && f.Summaries > 0 {
					cur.Memory.SummaryJSONBytes = float64(v.Bytes) / float64(f.Summaries)
				}
			}
			return err
		}},
		{"work", func() (err error) {
			cur.Work, err = r.env.Work(ctx, f, measure.WorkConfig{Clusters: r.s.WorkClusters, Region: "eu-west-1", OtherRegion: "us-east-1"})
			return err
		}},
		{"notify", func() (err error) {
			var listMs []float64
			if v := cur.List.Variant(results.VariantSummaries); v != nil {
				listMs = v.SamplesMs
			}
			cur.Notify, err = r.env.Notify(ctx, f, measure.NotifyConfig{Samples: r.s.NotifySamples, PollInterval: r.s.PollInterval, Seed: r.s.Seed}, listMs)
			return err
		}},
		{"fanout", func() (err error) {
			cur.FanOut, err = r.env.FanOut(ctx, f, measure.FanOutConfig{
				Watchers: r.s.FanOutWatchers, Rounds: r.s.FanOutRounds, Connections: r.s.FanOutConns, RoundTimeout: 30 * time.Second,
			})
			return err
		}},
		{"churn", func() (err error) {
			cur.Churn, err = r.env.Churn(ctx, f, measure.ChurnConfig{
				Mode: r.s.ChurnMode, Rates: r.s.ChurnRates, Step: r.s.ChurnStep, LagBound: r.s.ChurnLagBound, Drain: r.s.ChurnLagBound + 5*time.Second, Senders: r.s.ChurnSenders,
				ProfilePrefix: filepath.Join(r.profiles, fmt.Sprintf("cpu-churn-%d-", n)),
			})
			return err
		}},
	}
	for _, st := range steps {
		if r.s.Skip[st.name] {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := r.env.WaitServed(ctx, 2*time.Minute); err != nil {
			fail(st.name, err)
			continue
		}
		if err := r.env.Quiesce(ctx, time.Second, 2*time.Minute); err != nil {
			log.Printf("before %s: %v", st.name, err)
		}
		log.Printf("-- %s", st.name)
		if err := st.run(); err != nil {
			fail(st.name, err)
		}
		if err := r.write(); err != nil {
			return err
		}
	}
	return nil
}

// load creates the fixtures of g: the shared objects (namespaces, profiles, bundles) with the
// first scale, and the clusters from `from` on. With the first scale it also measures
// Periscope's baseline memory, between the two.
func (r *runner) load(ctx context.Context, g *fixtures.Generator, from int) (*results.Load, error) {
	loader := load.Loader{Client: r.env.Dynamic, Workers: r.s.LoadWorkers}
	var total load.Stats
	batches := [][]fixtures.Object{g.Namespaces()} // a small first scale may not have used every namespace
	if from == 0 {
		batches = append(batches, g.ClusterProfiles(), g.Bundles(), g.BundleDeployments())
	}
	for _, batch := range batches {
		st, err := loader.Load(ctx, slices.Values(batch))
		total.Add(st)
		if err != nil {
			return nil, fmt.Errorf("load fixtures: %w", err)
		}
	}
	if from == 0 {
		if err := r.baseline(ctx); err != nil {
			return nil, err
		}
	}
	st, err := loader.Load(ctx, measure.Objects(g, from, g.Config().Clusters))
	total.Add(st)
	if err != nil {
		return nil, fmt.Errorf("load clusters: %w", err)
	}
	log.Printf("loaded %d objects (%d there already) with %d requests in %.1fs (%.0f requests/s)",
		total.Created, total.Existing, total.Requests, total.Seconds, float64(total.Requests)/max(total.Seconds, 1e-9))
	return &results.Load{Objects: total.Created + total.Existing, Requests: total.Requests, Seconds: total.Seconds, Workers: r.s.LoadWorkers}, nil
}

// baseline measures Periscope's memory with the shared fixtures but no cluster: the fixed part
// of its heap. Periscope is stopped again afterwards.
func (r *runner) baseline(ctx context.Context) error {
	if _, _, err := r.env.StartPeriscope(ctx); err != nil {
		return err
	}
	base, err := r.env.Memory(ctx, measure.Fleet{}, filepath.Join(r.profiles, "heap-0.pb.gz"))
	if err != nil {
		return fmt.Errorf("baseline memory: %w", err)
	}
	r.report.Baseline = base
	log.Printf("baseline: heap %.1f MiB, RSS %.1f MiB", float64(base.HeapBytes)/(1<<20), float64(base.RSSBytes)/(1<<20))
	return r.env.Plane.Stop(ctx, "periscope")
}
