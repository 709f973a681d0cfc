package measure

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"periscope.dev/periscope/test/bench/fixtures"
	"periscope.dev/periscope/test/bench/load"
	"periscope.dev/periscope/test/bench/results"
	"periscope.dev/periscope/test/bench/stats"
)

// ListConfig bounds the list measurement.
type ListConfig struct {
	// Samples is how many times each variant is listed (after one warm-up)...
	Samples int
	// ...unless it has used Budget and has MinSamples already: lists of 50,000 summaries are
	// slow on two cores.
	MinSamples int
	Budget     time.Duration
	// Workers create the ConfigMaps of the floor.
	Workers int
}

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

type listVariant struct {
	name, description, path, accept string
	params                          map[string]string
	items                           int
	// direct sends the request to Periscope's own port instead of kube-apiserver.
	direct bool
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// List times lists through kube-apiserver: ClusterReadiness as JSON and as a Table, the raw
// ClusterSummaries a script would read instead, and the floor: N ConfigMaps whose list has the
// bytes of the ClusterReadiness list, served from kube-apiserver's watch cache.
func (e *Env) List(ctx context.Context, f Fleet, cfg ListConfig) (*results.List, error) {
	raw, items, err := e.listReadiness(ctx)
	if err != nil {
		return nil, err
	}
	floorNS := fmt.Sprintf("bench-floor-%d", f.Clusters)
	if err := e.buildFloor(ctx, floorNS, raw, items, cfg.Workers); err != nil {
		return nil, err
	}
	readiness := "/apis/" + ClusterReadinesses.Group + "/" + ClusterReadinesses.Version + "/" + ClusterReadinesses.Resource
	summaries := "/apis/" + fixtures.ClusterSummaries.Group + "/" + fixtures.ClusterSummaries.Version + "/" + fixtures.ClusterSummaries.Resource
	floor := "/api/v1/namespaces/" + floorNS + "/configmaps"
	fromCache := map[string]string{"resourceVersion": "0"}
	variants := []listVariant{
		{results.VariantReadiness, "`clusterreadinesses -A`, JSON, through the aggregator", readiness, "application/json", nil, f.Clusters, false},
		{results.VariantReadinessTable, "`clusterreadinesses -A` as a Table (kubectl get)", readiness, tableAccept, nil, f.Clusters, false},
		{results.VariantReadinessDirect, "`clusterreadinesses -A`, JSON, straight to Periscope's port: without the aggregator's hop", readiness, "application/json", nil, f.Clusters, true},
		{results.VariantSummaries, "`clustersummaries -A`, JSON: what a script reads today", summaries, "application/json", nil, f.Summaries, false},
		{results.VariantFloor, "floor: N ConfigMaps of equal bytes, JSON, watch cache (`resourceVersion=0`)", floor, "application/json", fromCache, f.Clusters, false},
		{results.VariantFloorTable, "floor as a Table, watch cache", floor, tableAccept, fromCache, f.Clusters, false},
		{results.VariantFloorDefault, "floor, JSON, consistent read (no resourceVersion)", floor, "application/json", nil, f.Clusters, false},
	}
	out := &results.List{Compression: "gzip above 128 KiB (client-go asks for it, as kubectl does)"}
	samples := make([][]float64, len(variants))
	spent := make([]time.Duration, len(variants))
	bytes := make([]int64, len(variants))
	for i, v := range variants { // warm-up, and the size of each list
		if bytes[i], _, err = e.timeList(ctx, v); err != nil {
			return nil, err
		}
	}
	done := func(i int) bool {
		n := len(samples[i])
		return n >= cfg.Samples || (spent[i] >= cfg.Budget && n >= cfg.MinSamples)
	}
	for !allDone(len(variants), done) {
		for i, v := range variants { // in turns, so that drift affects every variant alike
			if done(i) {
				continue
			}
			_, d, err := e.timeList(ctx, v)
			if err != nil {
				return nil, err
			}
			samples[i] = append(samples[i], stats.Millis([]time.Duration{d})[0])
			spent[i] += d
		}
	}
	for i, v := range variants {
		s := stats.Summarize(samples[i])
		e.Logf("list %s: %d items, %d bytes, median %.1fms, p99 %.1fms", v.name, v.items, bytes[i], s.Median, s.P99)
		out.Variants = append(out.Variants, results.ListVariant{
			Name: v.name, Description: v.description, Path: v.path, Accept: v.accept, Items: v.items,
			Bytes: bytes[i], SamplesMs: samples[i], Ms: s,
		})
	}
	med := func(name string) float64 { return out.Variant(name).Ms.Median }
	out.Ratios = []results.Ratio{
		{Name: "clusterreadinesses / floor (JSON)", Value: stats.Ratio(med(results.VariantReadiness), med(results.VariantFloor))},
		{Name: "clusterreadinesses / floor (Table)", Value: stats.Ratio(med(results.VariantReadinessTable), med(results.VariantFloorTable))},
		{Name: "clustersummaries / clusterreadinesses", Value: stats.Ratio(med(results.VariantSummaries), med(results.VariantReadiness))},
		{Name: "clusterreadinesses through the aggregator / straight to Periscope", Value: stats.Ratio(med(results.VariantReadiness), med(results.VariantReadinessDirect))},
		{Name: "list bytes, clusterreadinesses / floor", Value: stats.Ratio(float64(out.Variant(results.VariantReadiness).Bytes), float64(out.Variant(results.VariantFloor).Bytes))},
	}
	return out, nil
}

func allDone(n int, done func(int) bool) bool {
	for i := 0; i < n; i++ {
		if !done(i) {
			return false
		}
	}
	return true
}

// timeList lists once and reads the whole body.
func (e *Env) timeList(ctx context.Context, v listVariant) (int64, time.Duration, error) {
	client := e.Raw
	if v.direct {
		client = e.Periscope
	}
	req := client.Get().AbsPath(v.path).SetHeader("Accept", v.accept)
	for k, val := range v.params {
		req = req.Param(k, val)
	}
	start := time.Now()
	rc, err := req.Stream(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("list %s: %w", v.name, err)
	}
	n, err := drain(rc)
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("read the %s list: %w", v.name, err)
	}
	return n, d, nil
}

// buildFloor creates, in namespace ns, one ConfigMap per ClusterReadiness, carrying its labels
// and a data value sized so that the ConfigMap takes as many bytes in a list as the
// ClusterReadiness does. The size is calibrated on the first one: its list item is compared
// with the ClusterReadiness's, and every value is shortened or padded by the difference
// (metadata such as managedFields makes up most of it).
func (e *Env) buildFloor(ctx context.Context, ns string, raw []json.RawMessage, items []readinessItem, workers int) error {
	if len(items) == 0 {
		return fmt.Errorf("no ClusterReadiness to build the floor from")
	}
	if _, err := e.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	values := make([]string, len(raw))
	for i, r := range raw {
		var obj struct {
			Status json.RawMessage `json:"status"`
		}
		if err := json.Unmarshal(r, &obj); err != nil {
			return fmt.Errorf("decode a clusterreadiness: %w", err)
		}
		values[i] = unescaped(string(obj.Status))
	}
	name := func(i int) string { return items[i].Metadata.Namespace + "." + items[i].Metadata.Name }
	cm := func(i int, value string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name(i), Labels: items[i].Metadata.Labels},
			Data:       map[string]string{"status": value},
		}
	}
	cms := e.Kube.CoreV1().ConfigMaps(ns)
	// Calibrate on a fresh copy of the first one.
	if err := cms.Delete(ctx, name(0), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the calibration ConfigMap: %w", err)
	}
	if _, err := cms.Create(ctx, cm(0, values[0]), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the calibration ConfigMap: %w", err)
	}
	body, err := e.Raw.Get().AbsPath("/api/v1/namespaces/"+ns+"/configmaps").Param("fieldSelector", "metadata.name="+name(0)).
		SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("list the calibration ConfigMap: %w", err)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil || len(list.Items) != 1 {
		return fmt.Errorf("list the calibration ConfigMap: %d items (%v)", len(list.Items), err)
	}
	delta := len(list.Items[0]) - len(raw[0])
	e.Logf("floor: a ConfigMap takes %d bytes more than its ClusterReadiness besides the data; data values are adjusted by that", delta)
	first := cm(0, fit(values[0], len(values[0])-delta))
	got, err := cms.Get(ctx, first.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get the calibration ConfigMap: %w", err)
	}
	got.Data = first.Data
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update the calibration ConfigMap: %w", err)
	}
	objs := func(yield func(fixtures.Object) bool) {
		for i := 1; i < len(items); i++ {
			m := map[string]interface{}{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]interface{}{"namespace": ns, "name": name(i), "labels": stringMap(items[i].Metadata.Labels)},
				"data":     map[string]interface{}{"status": fit(values[i], len(values[i])-delta)},
			}
			if !yield(fixtures.Object{Resource: configMaps, Object: &unstructured.Unstructured{Object: m}}) {
				return
			}
		}
	}
	st, err := load.Loader{Client: e.Dynamic, Workers: workers}.Load(ctx, objs)
	if err != nil {
		return fmt.Errorf("create the floor's ConfigMaps: %w", err)
	}
	e.Logf("floor: %d ConfigMaps created (%d there already) in %.1fs", st.Created, st.Existing, st.Seconds)
	return nil
}

func stringMap(m map[string]string) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// unescaped replaces what JSON would escape (quotes, backslashes, <, >, &, control and
// non-ASCII characters), so that a value's length in a JSON list is its length in bytes.
func unescaped(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '"':
			return '\''
		case r == '\\':
			return '/'
		case r == '<' || r == '>' || r == '&' || r < 0x20 || r > 0x7e:
			return '.'
		}
		return r
	}, s)
}

// fit cuts or pads s to n bytes (at least one).
func fit(s string, n int) string {
	n = max(n, 1)
	if len(s) >= n {
		return s[:n]
	}
	return s + strings.Repeat(".", n-len(s))
}
