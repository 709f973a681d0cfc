package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// settings are the knobs of a run, read from BENCH_* environment variables (hack/bench.sh
// documents them). Smoke runs shrink them; the defaults are the issue's.
type settings struct {
	Scales         []int
	Seed           uint64
	LoadWorkers    int
	SyncStarts     int
	ListSamples    int
	ListMinSamples int
	ListBudget     time.Duration
	NotifySamples  int
	PollInterval   time.Duration
	FanOutWatchers int
	FanOutRounds   int
	FanOutConns    int
	ChurnMode      string
	ChurnRates     []float64
	ChurnStep      time.Duration
	ChurnLagBound  time.Duration
	ChurnSenders   int
	WorkClusters   int
	// Skip names measurements not to run (comma-separated: sync is always run).
	Skip map[string]bool
	// raw are the variables as given, for the report.
	raw map[string]string
}

func readSettings(getenv func(string) string) (settings, error) {
	s := settings{raw: map[string]string{}, Skip: map[string]bool{}}
	var errs []string
	get := func(key, def string) string {
		v := getenv(key)
		if v == "" {
			v = def
		}
		s.raw[key] = v
		return v
	}
	integer := func(key string, def int) int {
		v, err := strconv.Atoi(get(key, strconv.Itoa(def)))
		if err != nil || v < 0 {
			errs = append(errs, fmt.Sprintf("%s: want a non-negative integer", key))
		}
		return v
	}
	duration := func(key string, def time.Duration) time.Duration {
		v, err := time.ParseDuration(get(key, def.String()))
		if err != nil || v <= 0 {
			errs = append(errs, fmt.Sprintf("%s: want a positive duration", key))
		}
		return v
	}
	for _, f := range strings.Split(get("BENCH_SCALES", "1000,5000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			errs = append(errs, "BENCH_SCALES: want increasing positive integers, comma-separated")
			continue
		}
		if len(s.Scales) > 0 && n <= s.Scales[len(s.Scales)-1] {
			errs = append(errs, "BENCH_SCALES: scales must increase (each adds clusters to the previous one)")
		}
		s.Scales = append(s.Scales, n)
	}
	seed, err := strconv.ParseUint(get("BENCH_SEED", "1"), 10, 64)
	if err != nil {
		errs = append(errs, "BENCH_SEED: want an unsigned integer")
	}
	s.Seed = seed
	s.LoadWorkers = integer("BENCH_LOAD_WORKERS", 24)
	s.SyncStarts = max(integer("BENCH_SYNC_STARTS", 3), 1)
	s.ListSamples = integer("BENCH_LIST_SAMPLES", 15)
	s.ListMinSamples = integer("BENCH_LIST_MIN_SAMPLES", 5)
	s.ListBudget = duration("BENCH_LIST_BUDGET", 60*time.Second)
	s.NotifySamples = integer("BENCH_NOTIFY_SAMPLES", 200)
	s.PollInterval = duration("BENCH_POLL_INTERVAL", 10*time.Second)
	s.FanOutWatchers = integer("BENCH_FANOUT_WATCHERS", 1000)
	s.FanOutRounds = integer("BENCH_FANOUT_ROUNDS", 5)
	s.FanOutConns = integer("BENCH_FANOUT_CONNECTIONS", 8)
	for _, f := range strings.Split(get("BENCH_CHURN_RATES", "50,100,200,400,800,1600"), ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			errs = append(errs, "BENCH_CHURN_RATES: want positive numbers, comma-separated")
			continue
		}
		s.ChurnRates = append(s.ChurnRates, r)
	}
	s.ChurnMode = get("BENCH_CHURN_MODE", "retry")
	if s.ChurnMode != "retry" && s.ChurnMode != "ready" {
		errs = append(errs, "BENCH_CHURN_MODE: want retry or ready")
	}
	s.ChurnStep = duration("BENCH_CHURN_STEP", 10*time.Second)
	s.ChurnLagBound = duration("BENCH_CHURN_LAG_BOUND", time.Second)
	s.ChurnSenders = max(integer("BENCH_CHURN_SENDERS", 64), 1)
	s.WorkClusters = max(integer("BENCH_WORK_CLUSTERS", 20), 1)
	for _, m := range strings.Split(get("BENCH_SKIP", ""), ",") {
		if m = strings.TrimSpace(m); m != "" {
			if !knownMeasurements[m] {
				errs = append(errs, fmt.Sprintf("BENCH_SKIP: unknown measurement %q", m))
			}
			s.Skip[m] = true
		}
	}
	if len(errs) > 0 {
		return s, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return s, nil
}

var knownMeasurements = map[string]bool{"memory": true, "list": true, "work": true, "notify": true, "fanout": true, "churn": true}

func envSettings() (settings, error) { return readSettings(os.Getenv) }
