// Package evaluator runs readiness extension checks off the request path. The ClusterReadiness
// controller asks Checks for a cluster's results while it computes; Checks never calls an
// extension: it returns what is known (Pending before the first answer) and queues a call when
// the cluster's inputs changed. Each extension has its own bounded pool of workers and its own
// queue, so that a slow or dead extension never delays another. A handler whose calls fail is
// backed off from: while it fails, checks are answered from its last error without a call and
// one probe call is made per backoff period; its first answer lets every check be called again.
package evaluator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/extension"
	"periscope.dev/periscope/pkg/extensions/client"
	"periscope.dev/periscope/pkg/extensions/metrics"
	"periscope.dev/periscope/pkg/readiness"
)

// Reasons of a check result.
const (
	ReasonPassed          = "Passed"
	ReasonNotReady        = "NotReady"
	ReasonFailure         = "ExtensionFailure"
	ReasonFailureIgnored  = "FailureIgnored"
	ReasonDiscoveryFailed = "ExtensionDiscoveryFailed"
	// DiscoveryHandler names the check of an extension that was not discovered yet.
	DiscoveryHandler = "discovery"
	// A call that got no usable answer under failurePolicy Fail: "Extension" + the client's reason.
	reasonCallPrefix = "Extension"
)

// Caller calls one extension; *client.Client is one.
type Caller interface {
	Check(ctx context.Context, h client.Handler, req *extension.ClusterReadinessCheckRequest) (client.Answer, error)
}

// Extension is a registration whose handlers were discovered.
type Extension struct {
	Name              string
	NamespaceSelector labels.Selector
	ClusterSelector   labels.Selector
	Settings          map[string]string
	Handlers          []client.Handler
	Caller            Caller
	// Discovered is false until a discovery succeeded; the clusters the extension selects then
	// get one check named "discovery", Pending, or not ready with DiscoveryError, so that a
	// registered extension that cannot be reached does not pass silently.
	Discovered     bool
	DiscoveryError string
	// Generation changes whenever what a call depends on changes (registration, handlers):
	// every check of the extension is then asked again.
	Generation string
}

// Config configures an Evaluator.
type Config struct {
	// Workers is the number of concurrent calls per extension.
	Workers int
	// Resync is how often an answered check is asked again when the extension gave no
	// retryAfterSeconds; 10% jitter spreads the calls.
	Resync time.Duration
	// BackoffBase and BackoffMax bound the backoff from a failing handler.
	BackoffBase, BackoffMax time.Duration
	// NamespaceLabels returns a namespace's labels, for namespaceSelector.
	NamespaceLabels func(namespace string) labels.Set
	// OnResult is told when a cluster's check results changed: recompute it. Called without locks.
	OnResult func(clusterKey string)
	// OnHealth is told when a handler's health changed. Called without locks.
	OnHealth func(extension string)
	Clock    clock.WithTicker
}

type checkKey struct {
	cluster string // namespace/name
	handler string
}

type check struct {
	request  *extension.ClusterReadinessCheckRequest
	hash     string // of the request and the extension's generation
	answered string // the hash the current result answers; "" before the first answer
	result   v1alpha1.CheckResult
	// backedOff: the result is the handler's last error, given without a call.
	backedOff bool
}

type handlerState struct {
	handler    client.Handler
	health     v1alpha1.HandlerHealth
	lastError  string
	lastReason string
	failures   int
	nextProbe  time.Time
	probing    bool
}

type extensionState struct {
	ext      Extension
	queue    workqueue.TypedDelayingInterface[checkKey]
	cancel   context.CancelFunc
	handlers map[string]*handlerState
	// checks survive a new generation of the extension when the handler stays, so that
	// asking again does not turn Ready Unknown.
	checks map[checkKey]*check
}

// Evaluator evaluates the checks of every extension for every cluster.
type Evaluator struct {
	cfg Config
	ctx context.Context

	mu         sync.Mutex
	extensions map[string]*extensionState
}

// New returns an evaluator; Start it before Set.
func New(cfg Config) *Evaluator {
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Resync <= 0 {
		cfg.Resync = 5 * time.Minute
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = time.Second
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = 2 * time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.NamespaceLabels == nil {
		cfg.NamespaceLabels = func(string) labels.Set { return nil }
	}
	if cfg.OnResult == nil {
		cfg.OnResult = func(string) {}
	}
	if cfg.OnHealth == nil {
		cfg.OnHealth = func(string) {}
	}
	return &Evaluator{cfg: cfg, ctx: context.Background(), extensions: map[string]*extensionState{}}
}

// Start sets the context that bounds every call and every worker.
func (e *Evaluator) Start(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ctx = ctx
}

// Set registers or replaces an extension. A new generation asks every check again, keeping the
// previous answers of the handlers that stay until the new ones arrive.
func (e *Evaluator) Set(ext Extension) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.extensions[ext.Name]
	if old != nil && old.ext.Generation == ext.Generation {
		return
	}
	st := &extensionState{ext: ext, handlers: map[string]*handlerState{}, checks: map[checkKey]*check{}}
	for _, h := range ext.Handlers {
		hs := &handlerState{handler: h, health: v1alpha1.HandlerUnknown}
		if old != nil && old.handlers[h.Name] != nil {
			prev := old.handlers[h.Name]
			hs.health, hs.lastError = prev.health, prev.lastError
		}
		st.handlers[h.Name] = hs
	}
	if old != nil {
		e.stop(old)
		for k, c := range old.checks {
			if st.handlers[k.handler] != nil {
				c.hash = "" // asked again at the next Checks
				st.checks[k] = c
			}
		}
	}
	e.start(st)
	e.extensions[ext.Name] = st
}

// Remove unregisters an extension; its checks disappear at the clusters' next computation.
func (e *Evaluator) Remove(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if st := e.extensions[name]; st != nil {
		e.stop(st)
		delete(e.extensions, name)
	}
}

func (e *Evaluator) start(st *extensionState) {
	ctx, cancel := context.WithCancel(e.ctx)
	st.cancel = cancel
	st.queue = workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[checkKey]{
		Name: "extension-" + st.ext.Name, Clock: e.cfg.Clock,
	})
	for i := 0; i < e.cfg.Workers; i++ {
		go func() {
			for e.processNext(ctx, st) {
			}
		}()
	}
}

func (e *Evaluator) stop(st *extensionState) {
	st.cancel()
	st.queue.ShutDown()
}

// Health returns the handlers of an extension with their health, sorted by name.
func (e *Evaluator) Health(name string) []v1alpha1.HandlerStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.extensions[name]
	if st == nil {
		return nil
	}
	out := make([]v1alpha1.HandlerStatus, 0, len(st.handlers))
	for _, hs := range st.handlers {
		out = append(out, v1alpha1.HandlerStatus{
			Name: hs.handler.Name, TimeoutSeconds: int32(hs.handler.Timeout / time.Second),
			FailurePolicy: string(hs.handler.FailurePolicy), Health: hs.health, LastError: hs.lastError,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Checks returns the check results of a cluster, sorted by extension and handler, given the
// readiness computed so far (its ClusterAvailable and AddonsDeployed conditions). It never
// calls an extension: a check whose inputs changed is queued and keeps its last answer (or is
// Pending) until the call returns.
func (e *Evaluator) Checks(cluster readiness.Cluster, base []metav1.Condition) []v1alpha1.CheckResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := cluster.Key()
	nsLabels := e.cfg.NamespaceLabels(cluster.Namespace)
	var out []v1alpha1.CheckResult
	for _, st := range e.extensions {
		applies := st.ext.NamespaceSelector.Matches(nsLabels) && st.ext.ClusterSelector.Matches(labels.Set(cluster.Labels))
		if !st.ext.Discovered {
			if applies {
				out = append(out, undiscovered(st.ext))
			}
			continue
		}
		var req *extension.ClusterReadinessCheckRequest
		var hash string
		if applies { // one request for all of the extension's handlers
			req = request(cluster, base, st.ext.Settings)
			hash = hashOf(st.ext.Generation, req)
		}
		for name := range st.handlers {
			ck := checkKey{cluster: key, handler: name}
			if !applies {
				delete(st.checks, ck)
				continue
			}
			c := st.checks[ck]
			if c == nil {
				c = &check{result: v1alpha1.CheckResult{Extension: st.ext.Name, Handler: name, Reason: readiness.CheckReasonPending,
					Message: "waiting for the first answer"}}
				st.checks[ck] = c
			}
			if c.hash != hash {
				c.request, c.hash = req, hash
				st.queue.Add(ck)
			}
			out = append(out, c.result)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Extension != out[j].Extension {
			return out[i].Extension < out[j].Extension
		}
		return out[i].Handler < out[j].Handler
	})
	return out
}

// Forget drops a deleted cluster's checks.
func (e *Evaluator) Forget(clusterKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, st := range e.extensions {
		for name := range st.handlers {
			delete(st.checks, checkKey{cluster: clusterKey, handler: name})
		}
	}
}

func undiscovered(ext Extension) v1alpha1.CheckResult {
	r := v1alpha1.CheckResult{Extension: ext.Name, Handler: DiscoveryHandler, Reason: readiness.CheckReasonPending,
		Message: "waiting for the extension's discovery"}
	if ext.DiscoveryError != "" {
		r.Reason, r.Message = ReasonDiscoveryFailed, ext.DiscoveryError
	}
	return r
}

func request(c readiness.Cluster, base []metav1.Condition, settings map[string]string) *extension.ClusterReadinessCheckRequest {
	req := &extension.ClusterReadinessCheckRequest{
		Cluster: extension.ClusterInfo{
			APIVersion: c.APIVersion, Kind: c.Kind, Namespace: c.Namespace, Name: c.Name,
			UID: string(c.UID), Labels: c.Labels,
		},
		Settings: settings,
	}
	for _, cond := range base {
		ok := cond.Status == metav1.ConditionTrue
		switch cond.Type {
		case readiness.ConditionClusterAvailable:
			req.Readiness.ClusterAvailable = ok
		case readiness.ConditionAddonsDeployed:
			req.Readiness.AddonsDeployed = ok
		default:
			continue
		}
		req.Readiness.Conditions = append(req.Readiness.Conditions, extension.Condition{
			Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason, Message: cond.Message})
	}
	return req
}

func hashOf(generation string, req *extension.ClusterReadinessCheckRequest) string {
	data, _ := json.Marshal(req) // plain structs: cannot fail
	sum := sha256.Sum256(append([]byte(generation+"\n"), data...))
	return hex.EncodeToString(sum[:16])
}

func (e *Evaluator) processNext(ctx context.Context, st *extensionState) bool {
	key, shutdown := st.queue.Get()
	if shutdown {
		return false
	}
	defer st.queue.Done(key)
	e.evaluate(ctx, st, key)
	return true
}

// evaluate calls one check, or answers it from a failing handler's last error while backing off.
func (e *Evaluator) evaluate(ctx context.Context, st *extensionState, key checkKey) {
	e.mu.Lock()
	c, hs := st.checks[key], st.handlers[key.handler]
	if c == nil || hs == nil || c.request == nil || ctx.Err() != nil {
		e.mu.Unlock()
		return // no longer applies
	}
	req, hash, now := c.request, c.hash, e.cfg.Clock.Now()
	if hs.health == v1alpha1.HandlerFailing && (now.Before(hs.nextProbe) || hs.probing) {
		// Backing off: no call. The check reports the handler's last error.
		result := failedCall(st.ext.Name, hs.handler, hs.lastReason, hs.lastError)
		changed := c.set(result, hash, now)
		c.backedOff = true
		wait := hs.nextProbe.Sub(now)
		e.mu.Unlock()
		metrics.ExtensionCallsSkipped.WithLabelValues(st.ext.Name, key.handler).Inc()
		st.queue.AddAfter(key, max(wait, e.cfg.BackoffBase))
		if changed {
			e.cfg.OnResult(key.cluster)
		}
		return
	}
	wasFailing := hs.health == v1alpha1.HandlerFailing
	if wasFailing {
		hs.probing = true
	}
	e.mu.Unlock()

	start := e.cfg.Clock.Now()
	answer, err := st.ext.Caller.Check(ctx, hs.handler, req)
	metrics.ExtensionCallDuration.WithLabelValues(st.ext.Name, key.handler).Observe(e.cfg.Clock.Since(start).Seconds())
	if ctx.Err() != nil {
		return // unregistered or replaced while calling: the answer is for a registration that is gone
	}

	e.mu.Lock()
	hs.probing = false
	healthChanged := false
	var result v1alpha1.CheckResult
	var next time.Duration
	var recovered []checkKey
	now = e.cfg.Clock.Now()
	if err != nil {
		var ce *client.CallError
		outcome := "Error"
		if errors.As(err, &ce) {
			outcome = ce.Reason
		}
		metrics.ExtensionCalls.WithLabelValues(st.ext.Name, key.handler, outcome).Inc()
		hs.failures++
		backoff := min(e.cfg.BackoffBase<<min(hs.failures-1, 20), e.cfg.BackoffMax)
		hs.nextProbe = now.Add(backoff)
		healthChanged = hs.health != v1alpha1.HandlerFailing || hs.lastError != err.Error()
		hs.health, hs.lastError, hs.lastReason = v1alpha1.HandlerFailing, err.Error(), outcome
		result = failedCall(st.ext.Name, hs.handler, outcome, err.Error())
		next = backoff
		klog.V(2).InfoS("Readiness extension call failed", "extension", st.ext.Name, "handler", key.handler, "cluster", key.cluster, "err", err, "backoff", backoff)
	} else {
		metrics.ExtensionCalls.WithLabelValues(st.ext.Name, key.handler, "Answered").Inc()
		healthChanged = hs.health != v1alpha1.HandlerHealthy
		hs.health, hs.lastError, hs.failures = v1alpha1.HandlerHealthy, "", 0
		result = answered(st.ext.Name, key.handler, answer)
		next = answer.RetryAfter
		if next <= 0 {
			next = e.cfg.Resync + time.Duration(rand.Int64N(int64(e.cfg.Resync/10)+1))
		}
		if wasFailing {
			// The handler answers again: ask every check that was answered from its error.
			for k, other := range st.checks {
				if k.handler == key.handler && k != key && other.backedOff {
					recovered = append(recovered, k)
				}
			}
		}
	}
	changed := false
	if cur := st.checks[key]; cur == c {
		changed = c.set(result, hash, now)
		c.backedOff = false
	}
	e.mu.Unlock()

	st.queue.AddAfter(key, next)
	for _, k := range recovered {
		st.queue.Add(k)
	}
	if changed {
		e.cfg.OnResult(key.cluster)
	}
	if healthChanged {
		e.cfg.OnHealth(st.ext.Name)
	}
}

// set records a result; lastProbeTime moves only when what the result says changes, so that
// asking again does not churn the ClusterReadiness. It reports whether the result changed.
func (c *check) set(r v1alpha1.CheckResult, hash string, now time.Time) bool {
	c.answered = hash
	if c.result.Ready == r.Ready && c.result.Reason == r.Reason && c.result.Message == r.Message {
		return false
	}
	r.LastProbeTime = metav1.NewTime(now.UTC().Truncate(time.Second))
	c.result = r
	return true
}

func answered(ext, handler string, a client.Answer) v1alpha1.CheckResult {
	r := v1alpha1.CheckResult{Extension: ext, Handler: handler, Ready: a.Ready, Message: a.Message}
	switch {
	case a.Failure:
		r.Ready, r.Reason = false, ReasonFailure
	case a.Ready:
		r.Reason = ReasonPassed
	default:
		r.Reason = ReasonNotReady
	}
	return r
}

// failedCall is the result of a call without a usable answer: not ready under Fail, with the
// reason Extension<client reason> (ExtensionTimeout, ExtensionUnreachable, ...); passed under
// Ignore, with the reason FailureIgnored.
func failedCall(ext string, h client.Handler, reason, errMsg string) v1alpha1.CheckResult {
	if h.FailurePolicy == extension.FailurePolicyIgnore {
		return v1alpha1.CheckResult{Extension: ext, Handler: h.Name, Ready: true, Reason: ReasonFailureIgnored,
			Message: fmt.Sprintf("failurePolicy Ignore: %s", errMsg)}
	}
	return v1alpha1.CheckResult{Extension: ext, Handler: h.Name, Ready: false, Reason: reasonCallPrefix + reason, Message: errMsg}
}
