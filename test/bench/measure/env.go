// Package measure runs the benchmark's measurements against a local control plane with a
// loaded fleet. Each measurement is one file; they share the clients of Env.
package measure

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"periscope.dev/periscope/test/bench/fixtures"
	"periscope.dev/periscope/test/bench/localcp"
)

// ClusterReadinesses is Periscope's resource, read through kube-apiserver.
var ClusterReadinesses = schema.GroupVersionResource{Group: "visibility.periscope.dev", Version: "v1alpha1", Resource: "clusterreadinesses"}

// Env holds the clients of a run.
type Env struct {
	Plane *localcp.Plane
	// Admin is the admin's configuration for kube-apiserver.
	Admin   *rest.Config
	Dynamic dynamic.Interface
	Kube    kubernetes.Interface
	// Raw sends requests to any path of kube-apiserver.
	Raw rest.Interface
	// Periscope sends requests to Periscope's own port.
	Periscope rest.Interface
	Logf      func(format string, args ...interface{})
	// scrapes counts reads of Periscope's /metrics, whose CPU the work measurement subtracts.
	scrapes atomic.Int64
}

// NewEnv builds the clients for a running control plane.
func NewEnv(plane *localcp.Plane, logf func(string, ...interface{})) (*Env, error) {
	admin, err := plane.AdminConfig()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	kube, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	pcfg, err := plane.PeriscopeConfig()
	if err != nil {
		return nil, err
	}
	pcfg.Timeout = 2 * time.Minute
	pkube, err := kubernetes.NewForConfig(pcfg)
	if err != nil {
		return nil, fmt.Errorf("client for Periscope: %w", err)
	}
	return &Env{
		Plane: plane, Admin: admin, Dynamic: dyn, Kube: kube,
		Raw: kube.Discovery().RESTClient(), Periscope: pkube.Discovery().RESTClient(), Logf: logf,
	}, nil
}

// PeriscopePID returns the PID of the running Periscope.
func (e *Env) PeriscopePID() (int, error) { return e.Plane.PID("periscope") }

// Metrics reads Periscope's /metrics and sums the samples of each metric name (over labels).
func (e *Env) Metrics(ctx context.Context) (map[string]float64, error) {
	e.scrapes.Add(1)
	body, err := e.Periscope.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("get Periscope's /metrics: %w", err)
	}
	return parseMetrics(string(body)), nil
}

// parseMetrics reads the Prometheus text format: "name{labels} value [timestamp]".
func parseMetrics(text string) map[string]float64 {
	out := map[string]float64{}
	s := bufio.NewScanner(strings.NewReader(text))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			if j < i {
				continue
			}
			name, rest = line[:i], line[j+1:]
		} else if i := strings.IndexByte(line, ' '); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		out[name] += v
	}
	return out
}

// ComputationsMetric is the counter of ClusterReadiness computations.
const ComputationsMetric = "periscope_clusterreadiness_computations_total"

// Computations reads the computations counter; found is false when Periscope lacks it.
func (e *Env) Computations(ctx context.Context) (n float64, found bool, err error) {
	m, err := e.Metrics(ctx)
	if err != nil {
		return 0, false, err
	}
	n, found = m[ComputationsMetric]
	return n, found, nil
}

// WaitServed waits until a list of ClusterReadiness objects through kube-apiserver succeeds:
// after Periscope restarts, the aggregator needs a moment to reach it again.
func (e *Env) WaitServed(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		_, last = e.Dynamic.Resource(ClusterReadinesses).List(ctx, metav1.ListOptions{Limit: 1})
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ClusterReadiness not served through kube-apiserver within %v: %w", timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readinessItem is what the benchmark reads of a listed ClusterReadiness.
type readinessItem struct {
	Metadata struct {
		Namespace string            `json:"namespace"`
		Name      string            `json:"name"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Status struct {
		Ready bool `json:"ready"`
	} `json:"status"`
}

// listReadiness lists every ClusterReadiness through kube-apiserver and returns the raw items
// (as served) with what the benchmark reads of them.
func (e *Env) listReadiness(ctx context.Context) ([]json.RawMessage, []readinessItem, error) {
	rc, err := e.Raw.Get().AbsPath("/apis", ClusterReadinesses.Group, ClusterReadinesses.Version, ClusterReadinesses.Resource).
		SetHeader("Accept", "application/json").Stream(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list clusterreadinesses: %w", err)
	}
	defer rc.Close()
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.NewDecoder(rc).Decode(&list); err != nil {
		return nil, nil, fmt.Errorf("decode the clusterreadiness list: %w", err)
	}
	items := make([]readinessItem, len(list.Items))
	for i, raw := range list.Items {
		if err := json.Unmarshal(raw, &items[i]); err != nil {
			return nil, nil, fmt.Errorf("decode a clusterreadiness: %w", err)
		}
	}
	return list.Items, items, nil
}

// setSummary patches a pending summary's features to status (through the status subresource).
func (e *Env) setSummary(ctx context.Context, p *fixtures.PendingSummary, status string) error {
	patch, err := p.Patch(status)
	if err != nil {
		return err
	}
	return e.patchSummary(ctx, p, patch)
}

// patchSummary applies a merge patch to a summary's status subresource.
func (e *Env) patchSummary(ctx context.Context, p *fixtures.PendingSummary, patch []byte) error {
	_, err := e.Dynamic.Resource(fixtures.ClusterSummaries).Namespace(p.Namespace).
		Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patch clustersummary %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// drain reads and discards a response body, returning its size.
func drain(rc io.ReadCloser) (int64, error) {
	defer rc.Close()
	return io.Copy(io.Discard, rc)
}
