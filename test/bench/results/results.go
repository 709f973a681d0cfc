// Package results holds what a benchmark run measured, as written to docs/benchmarks.json, and
// renders it as docs/benchmarks.md with the targets marked pass or fail.
//
// Durations are milliseconds unless a field's name says otherwise. Raw samples are kept next to
// their summaries so that charts (hack/tools/benchchart) and later comparisons can use them.
package results

import (
	"time"

	"periscope.dev/periscope/test/bench/stats"
)

// Chart files, written beside the JSON by hack/tools/benchchart (which repeats these names).
const (
	ChartLatency = "benchmarks-latency.png"
	ChartList    = "benchmarks-list.png"
)

// Report is one run of the benchmark.
type Report struct {
	Meta Meta `json:"meta"`
	// Baseline is Periscope's memory with the shared fixtures (profiles, bundles) but no
	// cluster: the fixed part that per-cluster figures leave out.
	Baseline *Memory  `json:"baseline,omitempty"`
	Scales   []Scale  `json:"scales"`
	Micro    []Micro  `json:"micro,omitempty"`
	Targets  []Target `json:"targets,omitempty"`
}

// Meta describes the run and the machine.
type Meta struct {
	Date        time.Time `json:"date"`
	Commit      string    `json:"commit"`
	Dirty       bool      `json:"dirty"`
	GoVersion   string    `json:"goVersion"`
	OS          string    `json:"os"`
	Arch        string    `json:"arch"`
	Cores       int       `json:"cores"`
	MemoryBytes int64     `json:"memoryBytes"`
	CPUModel    string    `json:"cpuModel"`
	KubeVersion string    `json:"kubeVersion"`
	// CRDSource is "upstream" (../shared/crds) or "minimal" (test/crds).
	CRDSource string `json:"crdSource"`
	Seed      uint64 `json:"seed"`
	// Settings are the knobs of the run (sample counts, rates, ...).
	Settings map[string]string `json:"settings"`
	// Seconds is the wall time of the whole run (control plane and micro-benchmarks aside).
	Seconds float64 `json:"seconds"`
}

// Scale is everything measured with one fleet size.
type Scale struct {
	Clusters          int `json:"clusters"`
	Summaries         int `json:"summaries"`
	ClusterProfiles   int `json:"clusterProfiles"`
	Bundles           int `json:"bundles"`
	BundleDeployments int `json:"bundleDeployments"`
	// ExpectedReady is how many clusters the fixtures make Ready.
	ExpectedReady int `json:"expectedReady"`
	// Candidates are the clusters one summary away from Ready, which the latency, fan-out and
	// churn benchmarks flip.
	Candidates int `json:"candidates"`

	Load   *Load   `json:"load,omitempty"`
	Sync   *Sync   `json:"sync,omitempty"`
	Memory *Memory `json:"memory,omitempty"`
	List   *List   `json:"list,omitempty"`
	Work   *Work   `json:"work,omitempty"`
	Notify *Notify `json:"notify,omitempty"`
	FanOut *FanOut `json:"fanOut,omitempty"`
	Churn  *Churn  `json:"churn,omitempty"`
	// Errors are the measurements that failed at this scale, with why.
	Errors []string `json:"errors,omitempty"`
}

// Load is how the fixtures of this scale (beyond those of the smaller scales) were created.
type Load struct {
	Objects  int64   `json:"objects"`
	Requests int64   `json:"requests"`
	Seconds  float64 `json:"seconds"`
	Workers  int     `json:"workers"`
}

// Sync is Periscope's start with the fleet present: to /readyz, which Periscope passes once
// its sources are synced and every ClusterReadiness is computed.
type Sync struct {
	Samples []SyncSample `json:"samples"`
	// ReadySeconds and CPUSeconds summarize the samples.
	ReadySeconds stats.Summary `json:"readySeconds"`
	CPUSeconds   stats.Summary `json:"cpuSeconds"`
	// Listed and ListedReady are what a list through kube-apiserver returned after the last
	// start: every cluster, and as many Ready as the fixtures make Ready.
	Listed      int `json:"listed"`
	ListedReady int `json:"listedReady"`
}

// SyncSample is one start of Periscope.
type SyncSample struct {
	// ReadySeconds is from the process's start to /readyz passing.
	ReadySeconds float64 `json:"readySeconds"`
	// CPUSeconds is the CPU time the process used until then.
	CPUSeconds float64 `json:"cpuSeconds"`
	// ServedSeconds is from the start until a list through kube-apiserver returned every
	// cluster (the aggregator notices the restarted server on its own schedule).
	ServedSeconds float64 `json:"servedSeconds"`
}

// Memory is Periscope's memory after a start with the fleet present.
type Memory struct {
	RSSBytes   int64   `json:"rssBytes"`
	HeapBytes  int64   `json:"heapBytes"`
	Goroutines float64 `json:"goroutines"`
	// Per cluster and per summary: the whole heap (or RSS) divided by the count, its fixed
	// part included (Report.Baseline gives the figures above it, see PerCluster).
	HeapPerCluster float64 `json:"heapPerCluster"`
	HeapPerSummary float64 `json:"heapPerSummary"`
	RSSPerCluster  float64 `json:"rssPerCluster"`
	// SummaryJSONBytes is the size of one ClusterSummary as kube-apiserver lists it (average),
	// to compare with what Periscope keeps of it.
	SummaryJSONBytes float64 `json:"summaryJSONBytes,omitempty"`
	HeapProfile      string  `json:"heapProfile,omitempty"`
}

// List compares lists through kube-apiserver.
type List struct {
	Variants []ListVariant `json:"variants"`
	Ratios   []Ratio       `json:"ratios"`
	// Compression says how responses travelled (client-go asks for gzip, as kubectl does).
	Compression string `json:"compression"`
}

// ListVariant is one kind of list request.
type ListVariant struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Path        string        `json:"path"`
	Accept      string        `json:"accept"`
	Items       int           `json:"items"`
	Bytes       int64         `json:"bytes"`
	SamplesMs   []float64     `json:"samplesMs"`
	Ms          stats.Summary `json:"ms"`
}

// Ratio compares two list variants' medians.
type Ratio struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Notify is the time from a ClusterSummary change that makes a cluster Ready to a watcher of
// that ClusterReadiness seeing Ready=True, beside a watcher of the summary itself.
type Notify struct {
	Samples int `json:"samples"`
	// PeriscopeMs: patch sent until the ClusterReadiness watcher (through kube-apiserver) saw
	// Ready=True.
	PeriscopeMs []float64     `json:"periscopeMs"`
	Periscope   stats.Summary `json:"periscope"`
	// FloorMs: patch sent until a watcher of the ClusterSummary on kube-apiserver saw it.
	FloorMs []float64     `json:"floorMs"`
	Floor   stats.Summary `json:"floor"`
	// AddedMs: per sample, PeriscopeMs minus FloorMs: what Periscope adds.
	AddedMs []float64     `json:"addedMs"`
	Added   stats.Summary `json:"added"`
	// PollingMs: the polling alternative, modelled (see PollingModel).
	PollingMs           []float64     `json:"pollingMs"`
	Polling             stats.Summary `json:"polling"`
	PollIntervalSeconds float64       `json:"pollIntervalSeconds"`
	PollingModel        string        `json:"pollingModel"`
}

// FanOut is one change delivered to many concurrent watchers.
type FanOut struct {
	Watchers int `json:"watchers"`
	// SetupSeconds is how long opening every watch took.
	SetupSeconds float64       `json:"setupSeconds"`
	Rounds       []FanOutRound `json:"rounds"`
	// Ms summarizes every watcher of every round.
	Ms stats.Summary `json:"ms"`
}

// FanOutRound is one change: the time each watcher got it.
type FanOutRound struct {
	LatenciesMs []float64     `json:"latenciesMs"`
	Ms          stats.Summary `json:"ms"`
	// Missing is how many watchers had not got the change when the round gave up.
	Missing int `json:"missing"`
}

// Churn is summary changes at increasing rates.
type Churn struct {
	// Mode is what each change does: "retry" (a failed attempt on a pending summary; Ready
	// does not change) or "ready" (a flip between Ready and not, each recorded as an Event).
	Mode  string      `json:"mode"`
	Steps []ChurnStep `json:"steps"`
	// MaxFollowedRate is the highest rate (changes per second) Periscope followed with bounded
	// lag; 0 when it followed none.
	MaxFollowedRate float64 `json:"maxFollowedRate"`
	LagBoundMs      float64 `json:"lagBoundMs"`
	StepSeconds     float64 `json:"stepSeconds"`
	// SourceLimited is set when a step missed its rate because the changes could not be sent
	// that fast (kube-apiserver or this client), not because Periscope lagged.
	SourceLimited bool `json:"sourceLimited"`
}

// ChurnStep is one rate.
type ChurnStep struct {
	TargetRate   float64 `json:"targetRate"`
	AchievedRate float64 `json:"achievedRate"`
	Patches      int     `json:"patches"`
	Errors       int     `json:"errors"`
	// Skipped counts ticks with no cluster free to change (every candidate still waiting for
	// Periscope), Saturated ticks with every sender busy (the source is the limit).
	Skipped   int `json:"skipped"`
	Saturated int `json:"saturated"`
	// Unresolved counts changes Periscope had not shown when the step's drain ended.
	Unresolved int `json:"unresolved"`
	// LagMs is until the ClusterReadiness watcher shows a change; FloorLagMs until a watcher
	// of the ClusterSummaries on kube-apiserver sees it.
	LagMs      stats.Summary `json:"lagMs"`
	FloorLagMs stats.Summary `json:"floorLagMs"`
	CPUSeconds float64       `json:"cpuSeconds"`
	// CPUPer1000 is Periscope's CPU seconds per 1,000 source events.
	CPUPer1000 float64 `json:"cpuPer1000"`
	// Computations per source event, from periscope_clusterreadiness_computations_total; -1
	// when the metric is missing.
	ComputationsPerEvent float64 `json:"computationsPerEvent"`
	Followed             bool    `json:"followed"`
	// CPUProfile is Periscope's CPU profile of the step, for `go tool pprof`.
	CPUProfile string `json:"cpuProfile,omitempty"`
}

// Work counts Periscope's computations per kind of source event.
type Work struct {
	// MetricFound is false when Periscope does not expose the computations counter.
	MetricFound bool       `json:"metricFound"`
	Cases       []WorkCase `json:"cases"`
}

// WorkCase is one kind of source event.
type WorkCase struct {
	Event string `json:"event"`
	// Events is how many source events were made; Affected the clusters whose readiness they
	// can change (summed over the events).
	Events       int   `json:"events"`
	Affected     int   `json:"affected"`
	Computations int64 `json:"computations"`
	// PerAffected is Computations / Affected: 1 when the work is proportional.
	PerAffected float64 `json:"perAffected"`
	// CPUSecondsPerEvent is Periscope's CPU per event.
	CPUSecondsPerEvent float64 `json:"cpuSecondsPerEvent"`
}

// Micro is one micro-benchmark (go test -bench), summarized over its -count runs.
type Micro struct {
	Package string `json:"package"`
	Name    string `json:"name"`
	Runs    int    `json:"runs"`
	// Metrics by unit (ns/op, B/op, allocs/op and custom ones): the median over the runs.
	Metrics map[string]float64 `json:"metrics"`
}

// Target is one target of the issue.
type Target struct {
	Name     string `json:"name"`
	Goal     string `json:"goal"`
	Scale    int    `json:"scale"`
	Measured string `json:"measured"`
	// Pass is nil when the target could not be evaluated.
	Pass *bool `json:"pass"`
}
