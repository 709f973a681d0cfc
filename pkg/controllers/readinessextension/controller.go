// Package readinessextension follows readiness extension registrations (labelled ConfigMaps in
// Periscope's namespace): it parses each, discovers the extension's handlers (when the
// registration changes and periodically), hands the result to the evaluator and keeps one
// computed ReadinessExtension per registration in the store. A malformed registration is
// reported on its object and as an Event on its ConfigMap, and never affects the others.
package readinessextension

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/extension"
	"periscope.dev/periscope/pkg/extensions/client"
	"periscope.dev/periscope/pkg/extensions/evaluator"
	"periscope.dev/periscope/pkg/extensions/metrics"
	"periscope.dev/periscope/pkg/extensions/registration"
	"periscope.dev/periscope/pkg/store"
)

// Event reasons on a registration ConfigMap.
const (
	ReasonInvalidRegistration = "InvalidRegistration"
	ReasonDiscoveryFailed     = "DiscoveryFailed"
)

// Warner records a Warning Event and reports whether it did (only the replica holding the
// events Lease records); *notify.Recorder is one.
type Warner interface {
	Warn(regarding *corev1.ObjectReference, reason, action, note string) bool
}

// Discoverer calls an extension; *client.Client is one.
type Discoverer interface {
	evaluator.Caller
	Discover(ctx context.Context, timeout time.Duration) ([]client.Handler, error)
	Close()
}

// Config configures a Controller.
type Config struct {
	// Namespace is where registrations are read: Periscope's namespace.
	Namespace string
	Client    kubernetes.Interface
	Store     *store.Store
	Evaluator *evaluator.Evaluator
	// Warner records Events; nil records none.
	Warner Warner
	// OnChange is told when what the registrations check changed: recompute every cluster.
	OnChange func()
	// OnNamespace is told when a namespace's labels changed: recompute its clusters.
	OnNamespace func(namespace string)
	// DiscoveryInterval is how often an extension is discovered again.
	DiscoveryInterval time.Duration
	// DiscoveryTimeout bounds a discovery call.
	DiscoveryTimeout time.Duration
	// NewDiscoverer builds the client of an extension; client.New by default.
	NewDiscoverer func(client.Target) (Discoverer, error)
	// WarnRetry is how soon a Warning that this replica could not record (it did not lead) is
	// tried again: the leader may be elected after the problem was found. Default 10s.
	WarnRetry time.Duration
	Clock     clock.Clock
}

type state struct {
	parsed          bool
	resourceVersion string
	reg             registration.Registration
	invalid         string
	target          client.Target
	caller          Discoverer
	handlers        []client.Handler
	discovered      bool
	discoveryError  string
	// discoveryFailures counts consecutive failed discoveries, for the retry backoff.
	discoveryFailures int
	nextDiscovery     time.Time
	generation        string
	// warning is the Event to record (reason, action, note); recorded is the last one recorded,
	// so that each distinct problem is recorded once.
	warning  [3]string
	recorded [3]string
}

// discoveryRetryBase is the first retry delay after a failed discovery.
const discoveryRetryBase = 2 * time.Second

// Controller follows registrations.
type Controller struct {
	cfg        Config
	factory    informers.SharedInformerFactory
	nsFactory  informers.SharedInformerFactory
	configMaps corelisters.ConfigMapLister
	namespaces corelisters.NamespaceLister
	cmSynced   cache.InformerSynced
	nsSynced   cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]

	mu     sync.Mutex
	states map[string]*state
	// initial holds the registrations found at start-up that were not processed yet.
	initial     sets.Set[string]
	initialDone atomic.Bool
}

// New returns a controller. Its informers start with Run.
func New(cfg Config) *Controller {
	if cfg.DiscoveryInterval <= 0 {
		cfg.DiscoveryInterval = time.Minute
	}
	if cfg.DiscoveryTimeout <= 0 {
		cfg.DiscoveryTimeout = time.Duration(extension.DefaultTimeoutSeconds) * time.Second
	}
	if cfg.NewDiscoverer == nil {
		cfg.NewDiscoverer = func(t client.Target) (Discoverer, error) { return client.New(t) }
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.WarnRetry <= 0 {
		cfg.WarnRetry = 10 * time.Second
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func() {}
	}
	if cfg.OnNamespace == nil {
		cfg.OnNamespace = func(string) {}
	}
	c := &Controller{
		cfg: cfg,
		factory: informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0, informers.WithNamespace(cfg.Namespace),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = registration.Label + "=true" })),
		nsFactory: informers.NewSharedInformerFactory(cfg.Client, 0),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "readinessextension"}),
		states: map[string]*state{},
	}
	cmInformer := c.factory.Core().V1().ConfigMaps()
	c.configMaps, c.cmSynced = cmInformer.Lister(), cmInformer.Informer().HasSynced
	_, _ = cmInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, cur interface{}) { c.enqueue(cur) },
		DeleteFunc: c.enqueue,
	})
	nsInformer := c.nsFactory.Core().V1().Namespaces()
	// Only namespace labels are read: keep nothing else in memory.
	_ = nsInformer.Informer().SetTransform(func(obj interface{}) (interface{}, error) {
		if ns, ok := obj.(*corev1.Namespace); ok {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, Labels: ns.Labels, ResourceVersion: ns.ResourceVersion}}, nil
		}
		return obj, nil
	})
	c.namespaces, c.nsSynced = nsInformer.Lister(), nsInformer.Informer().HasSynced
	_, _ = nsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur interface{}) {
			o, ok1 := old.(*corev1.Namespace)
			n, ok2 := cur.(*corev1.Namespace)
			if ok1 && ok2 && !labels.Equals(o.Labels, n.Labels) {
				c.cfg.OnNamespace(n.Name)
			}
		},
	})
	return c
}

func (c *Controller) enqueue(obj interface{}) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		c.queue.Add(cm.Name)
	}
}

// NamespaceLabels returns a namespace's labels from the cache, for namespace selectors.
func (c *Controller) NamespaceLabels(namespace string) labels.Set {
	ns, err := c.namespaces.Get(namespace)
	if err != nil {
		return nil
	}
	return ns.Labels
}

// HealthChanged asks for the ReadinessExtension of name to be rebuilt (no discovery).
func (c *Controller) HealthChanged(name string) { c.queue.Add(name) }

// Synced reports whether every registration found at start-up was read and discovered once, so
// that clusters are not computed without the checks that apply to them.
func (c *Controller) Synced() bool { return c.initialDone.Load() }

// Run follows registrations until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	c.factory.Start(ctx.Done())
	c.nsFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.cmSynced, c.nsSynced) {
		return
	}
	cms, err := c.configMaps.ConfigMaps(c.cfg.Namespace).List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "Listing readiness extension registrations from the cache")
	}
	c.mu.Lock()
	c.initial = sets.New[string]()
	for _, cm := range cms {
		c.initial.Insert(cm.Name)
	}
	c.initialDone.Store(c.initial.Len() == 0)
	c.mu.Unlock()
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.processNext(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.states {
		if st.caller != nil {
			st.caller.Close()
		}
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	name, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(name)
	if err := c.sync(ctx, name); err != nil {
		klog.ErrorS(err, "Syncing a readiness extension registration; retrying", "registration", name)
		c.queue.AddRateLimited(name)
		return true
	}
	c.queue.Forget(name)
	c.mu.Lock()
	if c.initial != nil && c.initial.Has(name) {
		c.initial.Delete(name)
		if c.initial.Len() == 0 {
			c.initialDone.Store(true)
		}
	}
	c.mu.Unlock()
	return true
}

func (c *Controller) sync(ctx context.Context, name string) error {
	cm, err := c.configMaps.ConfigMaps(c.cfg.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.remove(name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading ConfigMap %s/%s: %w", c.cfg.Namespace, name, err)
	}
	c.mu.Lock()
	st := c.states[name]
	if st == nil {
		st = &state{}
		c.states[name] = st
	}
	c.mu.Unlock()
	// Only this controller's workers touch st, one at a time per name (the queue guarantees it).

	if !st.parsed || cm.ResourceVersion != st.resourceVersion {
		st.parsed, st.resourceVersion = true, cm.ResourceVersion
		reg, err := registration.FromConfigMap(cm)
		if err != nil {
			st.invalid, st.discovered, st.handlers, st.discoveryError = err.Error(), false, nil, ""
			c.closeCaller(st)
			st.warning = [3]string{ReasonInvalidRegistration, "Validate", err.Error()}
			c.setExtension(name, st, false)
			return c.apply(cm, st)
		}
		st.reg, st.invalid = reg, ""
		st.warning = [3]string{}
		st.nextDiscovery = time.Time{} // a changed registration is discovered now
	}
	if st.invalid != "" {
		return c.apply(cm, st)
	}
	now := c.cfg.Clock.Now()
	if !now.Before(st.nextDiscovery) {
		c.discover(ctx, cm, st)
		// A failed discovery is retried sooner, backing off up to the interval: the extension
		// (or the Kubernetes API, to resolve a Service) may be back in a moment.
		next := c.cfg.DiscoveryInterval
		if st.discoveryError != "" {
			st.discoveryFailures++
			next = min(discoveryRetryBase<<min(st.discoveryFailures-1, 10), c.cfg.DiscoveryInterval)
		} else {
			st.discoveryFailures = 0
		}
		st.nextDiscovery = now.Add(next)
		c.setExtension(name, st, true)
	}
	// Arm the next discovery on every sync: the delaying queue keeps only the soonest of the
	// waits queued for a name, so a shorter one (a Warning retry) would otherwise drop it.
	c.queue.AddAfter(name, st.nextDiscovery.Sub(now))
	return c.apply(cm, st)
}

// discover resolves the extension's address, (re)builds its client when the address changed and
// asks for its handlers. A failure after an earlier success keeps the handlers: their calls then
// fail by their own failure policy rather than the checks vanishing.
func (c *Controller) discover(ctx context.Context, cm *corev1.ConfigMap, st *state) {
	fail := func(reason string, err error) {
		metrics.ExtensionDiscoveries.WithLabelValues(st.reg.Name, reason).Inc()
		st.discoveryError = err.Error()
		st.warning = [3]string{ReasonDiscoveryFailed, "Discover", err.Error()}
		klog.InfoS("Discovering a readiness extension failed", "registration", st.reg.Name, "err", err)
	}
	base, serverName, err := st.reg.ClientConfig.BaseURL(func(namespace, name string, port int32) (string, error) {
		return c.resolveService(ctx, namespace, name, port)
	})
	if err != nil {
		fail(client.ReasonUnreachable, err)
		return
	}
	target := client.Target{BaseURL: base, ServerName: serverName, CABundle: st.reg.ClientConfig.CABundle}
	if st.caller == nil || !sameTarget(target, st.target) {
		caller, err := c.cfg.NewDiscoverer(target)
		if err != nil {
			fail(client.ReasonTLSError, err)
			return
		}
		c.closeCaller(st)
		st.caller, st.target = caller, target
	}
	handlers, err := st.caller.Discover(ctx, c.cfg.DiscoveryTimeout)
	if err != nil {
		reason := "Error"
		var ce *client.CallError
		if errors.As(err, &ce) {
			reason = ce.Reason
		}
		fail(reason, err)
		return
	}
	metrics.ExtensionDiscoveries.WithLabelValues(st.reg.Name, "Success").Inc()
	st.handlers, st.discovered, st.discoveryError = handlers, true, ""
	st.warning, st.recorded = [3]string{}, [3]string{}
}

func sameTarget(a, b client.Target) bool {
	return a.BaseURL == b.BaseURL && a.ServerName == b.ServerName && string(a.CABundle) == string(b.CABundle)
}

// resolveService returns host:port for a service reference. An ExternalName Service is dialled
// at its external name (how a local development setup reaches a process on loopback); any other
// at its cluster DNS name. The TLS name verified is <name>.<namespace>.svc either way.
func (c *Controller) resolveService(ctx context.Context, namespace, name string, port int32) (string, error) {
	svc, err := c.cfg.Client.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	host := name + "." + namespace + ".svc"
	if svc.Spec.Type == corev1.ServiceTypeExternalName && svc.Spec.ExternalName != "" {
		host = svc.Spec.ExternalName
	}
	return fmt.Sprintf("%s:%d", host, port), nil
}

func (c *Controller) closeCaller(st *state) {
	if st.caller != nil {
		st.caller.Close()
		st.caller, st.target = nil, client.Target{}
	}
}

// setExtension hands the registration to the evaluator (or removes it) and, when what it checks
// changed, has every cluster recomputed.
func (c *Controller) setExtension(name string, st *state, valid bool) {
	if !valid {
		if st.generation != "" {
			st.generation = ""
			c.cfg.Evaluator.Remove(name)
			c.cfg.OnChange()
		}
		return
	}
	gen := generation(st)
	if gen == st.generation {
		return
	}
	st.generation = gen
	c.cfg.Evaluator.Set(evaluator.Extension{
		Name: name, NamespaceSelector: st.reg.NamespaceSelector, ClusterSelector: st.reg.ClusterSelector,
		Settings: st.reg.Settings, Handlers: st.handlers, Caller: st.caller,
		Discovered: st.discovered, DiscoveryError: st.discoveryError, Generation: gen,
	})
	c.cfg.OnChange()
}

// generation changes whenever a call's inputs or the checks' shape change.
func generation(st *state) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%x\n%v\n", st.resourceVersion, st.target.BaseURL, st.target.ServerName, st.target.CABundle, st.discovered)
	if !st.discovered {
		fmt.Fprintf(h, "%s\n", st.discoveryError)
	}
	for _, hd := range st.handlers {
		fmt.Fprintf(h, "%s %s %s\n", hd.Name, hd.Timeout, hd.FailurePolicy)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func (c *Controller) remove(name string) {
	c.mu.Lock()
	st := c.states[name]
	delete(c.states, name)
	c.mu.Unlock()
	c.cfg.Evaluator.Remove(name)
	c.cfg.Store.Delete("", name)
	if st != nil {
		c.closeCaller(st)
		if st.generation != "" {
			c.cfg.OnChange()
		}
	}
}

// flushWarning records the problem noted in st.warning as an Event on the ConfigMap, once, retrying later when this replica does not lead.
func (c *Controller) flushWarning(cm *corev1.ConfigMap, st *state) {
	if c.cfg.Warner == nil || st.warning[0] == "" || st.warning == st.recorded {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name, UID: cm.UID}
	if c.cfg.Warner.Warn(ref, st.warning[0], st.warning[1], st.warning[2]) {
		st.recorded = st.warning
		return
	}
	c.queue.AddAfter(cm.Name, c.cfg.WarnRetry)
}

func (c *Controller) apply(cm *corev1.ConfigMap, st *state) error {
	c.flushWarning(cm, st)
	var previous []metav1.Condition
	if obj, ok := c.cfg.Store.Get("", cm.Name); ok {
		previous = obj.(*v1alpha1.ReadinessExtension).Status.Conditions
	}
	var health []v1alpha1.HandlerStatus
	if st.invalid == "" {
		health = c.cfg.Evaluator.Health(cm.Name)
	}
	obj := Build(cm, View{
		Registration: st.reg, Invalid: st.invalid, Discovered: st.discovered,
		DiscoveryError: st.discoveryError, Handlers: health,
	}, previous, c.cfg.Clock.Now())
	if _, err := c.cfg.Store.Apply(obj); err != nil {
		return fmt.Errorf("storing ReadinessExtension %s: %w", cm.Name, err)
	}
	return nil
}
