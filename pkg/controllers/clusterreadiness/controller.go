// Package clusterreadiness keeps one ClusterReadiness per managed cluster in the store, equal to
// what pkg/readiness computes. It recomputes incrementally: a cluster event recomputes that
// cluster; a ClusterSummary event recomputes the cluster it reports on; a profile event
// recomputes the clusters the profile matched before or matches now. Unchanged results emit no
// watch event.
package clusterreadiness

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/extensions/metrics"
	"periscope.dev/periscope/pkg/readiness"
	"periscope.dev/periscope/pkg/sources"
	"periscope.dev/periscope/pkg/store"
)

// The source resources read.
var (
	CAPIClusters     = schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "clusters"}
	SveltosClusters  = schema.GroupResource{Group: "lib.projectsveltos.io", Resource: "sveltosclusters"}
	ClusterProfiles  = schema.GroupResource{Group: "config.projectsveltos.io", Resource: "clusterprofiles"}
	Profiles         = schema.GroupResource{Group: "config.projectsveltos.io", Resource: "profiles"}
	ClusterSummaries = schema.GroupResource{Group: "config.projectsveltos.io", Resource: "clustersummaries"}
)

// SummaryClusterIndex indexes ClusterSummaries by the namespace/name of their cluster.
const SummaryClusterIndex = "cluster"

func summaryClusterKey(obj interface{}) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u == nil {
		return nil, nil
	}
	name := u.GetLabels()[readiness.LabelClusterName]
	if name == "" {
		return nil, nil
	}
	return []string{u.GetNamespace() + "/" + name}, nil
}

// Source is what the controller reads: the dynamic sources, or a fake in tests.
type Source interface {
	Served(gr schema.GroupResource) string
	List(gr schema.GroupResource) []*unstructured.Unstructured
	GetByKey(gr schema.GroupResource, key string) (*unstructured.Unstructured, bool)
	ByIndex(gr schema.GroupResource, index, value string) []*unstructured.Unstructured
	HasSynced() bool
}

// Notifier is told when a cluster's Ready condition changes while the server runs.
type Notifier interface {
	ReadyChanged(ctx context.Context, obj *v1alpha1.ClusterReadiness, ready metav1.Condition)
}

// Checker gives the readiness extensions' check results of a cluster, given the readiness
// computed so far; it must not block (the evaluator of pkg/extensions is one).
type Checker interface {
	Checks(cluster readiness.Cluster, base []metav1.Condition) []v1alpha1.CheckResult
	Forget(clusterKey string)
}

// Controller computes ClusterReadiness objects.
type Controller struct {
	store    *store.Store
	source   Source
	notifier Notifier
	checker  Checker
	// checkerSynced reports whether the registrations found at start-up were read, so that the
	// first computation includes the checks that apply.
	checkerSynced func() bool
	queue         workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// profiles caches the extracted profiles by key, updated on profile events, so that a
	// recomputation does not parse every profile again.
	profiles map[string]readiness.Profile
	// profileList is profiles as a slice, rebuilt after a profile change (nil until then) and
	// shared read-only by the computations: copying 40 profiles into every computation was a
	// fifth of its cost at start-up.
	profileList []readiness.Profile
	// matchedBy records, per profile key, the clusters it matched when they were last computed.
	matchedBy map[string]sets.Set[string]
	// matches is the reverse: per cluster key, the profiles it matched.
	matches map[string][]string

	computations atomic.Int64
	initialDone  atomic.Bool
}

// New returns a controller; call SetSource before Run. notifier may be nil.
func New(s *store.Store, notifier Notifier) *Controller {
	return &Controller{
		store:    s,
		notifier: notifier,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "clusterreadiness"}),
		profiles:  map[string]readiness.Profile{},
		matchedBy: map[string]sets.Set[string]{},
		matches:   map[string][]string{},
	}
}

// SetSource sets what the controller reads.
func (c *Controller) SetSource(s Source) { c.source = s }

// SetChecker sets where the extensions' checks come from, before Run.
func (c *Controller) SetChecker(checker Checker, synced func() bool) {
	c.checker, c.checkerSynced = checker, synced
}

// Enqueue recomputes one cluster (namespace/name): its check results changed.
func (c *Controller) Enqueue(clusterKey string) { c.queue.Add(clusterKey) }

// EnqueueAll recomputes every cluster: what the extensions check changed.
func (c *Controller) EnqueueAll() {
	for _, cluster := range c.clusterIdentities() {
		c.queue.Add(cluster.Key())
	}
}

// EnqueueNamespace recomputes the clusters of a namespace: its labels changed, which namespace
// selectors of extensions read.
func (c *Controller) EnqueueNamespace(namespace string) {
	for _, cluster := range c.clusterIdentities() {
		if cluster.Namespace == namespace {
			c.queue.Add(cluster.Key())
		}
	}
}

// SourceResources are the dynamic sources of the controller, with its event handlers.
func (c *Controller) SourceResources() []sources.Resource {
	return []sources.Resource{
		{
			Group: CAPIClusters.Group, Resource: CAPIClusters.Resource, Versions: []string{"v1beta2", "v1beta1"},
			Transform: sources.KeepFields([]string{"status", "conditions"}, []string{"status", "initialization"},
				[]string{"status", "infrastructureReady"}, []string{"status", "controlPlaneReady"}),
			Handler: c.objectHandler(c.onCluster),
		},
		{
			Group: SveltosClusters.Group, Resource: SveltosClusters.Resource, Versions: []string{"v1beta1"},
			Transform: sources.KeepFields([]string{"status", "ready"}, []string{"status", "connectionStatus"}, []string{"status", "failureMessage"}),
			Handler:   c.objectHandler(c.onCluster),
		},
		{
			Group: ClusterProfiles.Group, Resource: ClusterProfiles.Resource, Versions: []string{"v1beta1"},
			Transform: profileTransform,
			Handler:   c.objectHandler(c.onProfile),
		},
		{
			Group: Profiles.Group, Resource: Profiles.Resource, Versions: []string{"v1beta1"},
			Transform: profileTransform,
			Handler:   c.objectHandler(c.onProfile),
		},
		{
			Group: ClusterSummaries.Group, Resource: ClusterSummaries.Resource, Versions: []string{"v1beta1"},
			Transform: sources.TrimItems(
				sources.KeepFields([]string{"status", "featureSummaries"}, []string{"status", "helmReleaseSummaries"}, []string{"status", "failureMessage"}),
				sources.ItemFields{Path: []string{"status", "featureSummaries"}, Keys: []string{"featureID", "status", "failureMessage"}},
				sources.ItemFields{Path: []string{"status", "helmReleaseSummaries"}, Keys: []string{"releaseNamespace", "releaseName", "status", "conflictMessage"}}),
			Indexers: cache.Indexers{SummaryClusterIndex: summaryClusterKey},
			Handler:  c.objectHandler(c.onSummary),
		},
	}
}

var profileTransform = sources.KeepFields(
	[]string{"spec", "clusterSelector"}, []string{"spec", "clusterRefs"}, []string{"spec", "syncMode"},
	[]string{"spec", "helmCharts"}, []string{"spec", "policyRefs"}, []string{"spec", "kustomizationRefs"})

// objectHandler adapts f(old, new) (nil for absent) to informer events, unwrapping tombstones.
func (c *Controller) objectHandler(f func(old, cur *unstructured.Unstructured)) cache.ResourceEventHandler {
	asU := func(obj interface{}) *unstructured.Unstructured {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		u, _ := obj.(*unstructured.Unstructured)
		return u
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { f(nil, asU(obj)) },
		UpdateFunc: func(old, cur interface{}) { f(asU(old), asU(cur)) },
		DeleteFunc: func(obj interface{}) { f(asU(obj), nil) },
	}
}

func (c *Controller) onCluster(old, cur *unstructured.Unstructured) {
	for _, u := range []*unstructured.Unstructured{old, cur} {
		if u != nil {
			c.queue.Add(u.GetNamespace() + "/" + u.GetName())
		}
	}
}

func (c *Controller) onSummary(old, cur *unstructured.Unstructured) {
	for _, u := range []*unstructured.Unstructured{old, cur} {
		if u == nil {
			continue
		}
		if keys, _ := summaryClusterKey(u); len(keys) > 0 {
			c.queue.Add(keys[0])
		}
	}
}

// onProfile recomputes the clusters the profile matched before and those it matches now.
func (c *Controller) onProfile(old, cur *unstructured.Unstructured) {
	affected := sets.New[string]()
	c.mu.Lock()
	if old != nil {
		key := readiness.ProfileFromUnstructured(old).Key()
		affected = affected.Union(c.matchedBy[key])
		delete(c.profiles, key)
		c.profileList = nil
	}
	var p readiness.Profile
	if cur != nil {
		p = readiness.ProfileFromUnstructured(cur)
		c.profiles[p.Key()] = p
		c.profileList = nil
		affected = affected.Union(c.matchedBy[p.Key()])
	}
	c.mu.Unlock()
	if cur != nil {
		// Matching reads only identities and labels: extracting every cluster in full here
		// made one profile event cost as much as recomputing the fleet.
		for _, cluster := range c.clusterIdentities() {
			if readiness.Matches(p, cluster) {
				affected.Insert(cluster.Key())
			}
		}
	}
	for key := range affected {
		c.queue.Add(key)
	}
}

// Resync recomputes every cluster: when a source starts or stops being served its objects
// appear or vanish without events.
func (c *Controller) Resync() {
	c.mu.Lock()
	c.profiles = map[string]readiness.Profile{}
	c.profileList = nil
	if c.source != nil {
		for _, gr := range []schema.GroupResource{ClusterProfiles, Profiles} {
			for _, u := range c.source.List(gr) {
				p := readiness.ProfileFromUnstructured(u)
				c.profiles[p.Key()] = p
			}
		}
	}
	c.mu.Unlock()
	for _, key := range c.store.Keys() {
		c.queue.Add(trimKey(key)) // computed before: recomputed, or deleted if it is gone
	}
	for _, cluster := range c.clusterIdentities() {
		c.queue.Add(cluster.Key())
	}
}

// trimKey turns a store key "/ns/name" into "ns/name".
func trimKey(storeKey string) string { return storeKey[1:] }

// clusterIdentities returns every cluster with only what matching reads extracted (see
// readiness.ClusterIdentity), a Cluster API Cluster winning over a SveltosCluster of the same
// namespace and name.
func (c *Controller) clusterIdentities() []readiness.Cluster {
	if c.source == nil {
		return nil
	}
	capiClusters := c.source.List(CAPIClusters)
	seen := make(map[string]bool, len(capiClusters))
	out := make([]readiness.Cluster, 0, len(capiClusters))
	for _, u := range capiClusters {
		cl := readiness.ClusterIdentity(u, v1alpha1.ClusterTypeCapi)
		seen[cl.Key()] = true
		out = append(out, cl)
	}
	for _, u := range c.source.List(SveltosClusters) {
		if !seen[u.GetNamespace()+"/"+u.GetName()] {
			out = append(out, readiness.ClusterIdentity(u, v1alpha1.ClusterTypeSveltos))
		}
	}
	return out
}

// cluster returns the cluster with key namespace/name, with the same precedence.
func (c *Controller) cluster(key string) (readiness.Cluster, bool) {
	if u, ok := c.source.GetByKey(CAPIClusters, key); ok {
		return readiness.ClusterFromCAPI(u), true
	}
	if u, ok := c.source.GetByKey(SveltosClusters, key); ok {
		return readiness.ClusterFromSveltos(u), true
	}
	return readiness.Cluster{}, false
}

// Run computes until ctx is done, once the sources have synced.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return c.source.HasSynced() && (c.checkerSynced == nil || c.checkerSynced()), nil
	}); err != nil {
		return
	}
	c.Resync()
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.processNext(ctx) {
			}
		}, time.Second)
	}
	// The first full computation is done once the queue that Resync filled has drained.
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		return c.queue.Len() == 0, nil
	}); err == nil {
		c.initialDone.Store(true)
	}
	<-ctx.Done()
}

// Synced reports whether the sources have synced and the initial computation is done.
func (c *Controller) Synced() bool {
	return c.source != nil && c.source.HasSynced() && c.initialDone.Load() && (c.checkerSynced == nil || c.checkerSynced())
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		klog.ErrorS(err, "Computing a ClusterReadiness; retrying", "cluster", key)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// Computations returns how many times a cluster's readiness has been computed.
func (c *Controller) Computations() int64 { return c.computations.Load() }

func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return fmt.Errorf("bad key %q: %w", key, err)
	}
	cluster, ok := c.cluster(key)
	if !ok {
		c.store.Delete(namespace, name)
		c.setMatches(key, nil)
		if c.checker != nil {
			c.checker.Forget(key)
		}
		return nil
	}
	c.computations.Add(1)
	metrics.ClusterReadinessComputations.Inc()

	in := readiness.Input{Cluster: cluster, Profiles: c.currentProfiles()}
	for _, u := range c.source.ByIndex(ClusterSummaries, SummaryClusterIndex, key) {
		in.Summaries = append(in.Summaries, readiness.SummaryFromUnstructured(u))
	}
	var previous *v1alpha1.ClusterReadiness
	if obj, ok := c.store.Get(namespace, name); ok {
		previous = obj.(*v1alpha1.ClusterReadiness)
		in.Previous = previous.Status.Conditions
	}
	result := readiness.ComputeBase(in)
	var checks []v1alpha1.CheckResult
	if c.checker != nil {
		checks = c.checker.Checks(cluster, result.Status.Conditions)
	}
	result = result.WithChecks(checks, in.Previous)
	obj := &v1alpha1.ClusterReadiness{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "ClusterReadiness"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, Labels: cluster.Labels,
			UID: cluster.UID, CreationTimestamp: cluster.Created,
		},
		Status: result.Status,
	}
	changed, err := c.store.Apply(obj)
	if err != nil {
		return err
	}
	c.setMatches(key, result.Matched)
	if changed && previous != nil && previous.Status.Ready != obj.Status.Ready && c.notifier != nil {
		for _, cond := range obj.Status.Conditions {
			if cond.Type == readiness.ConditionReady {
				c.notifier.ReadyChanged(ctx, obj, cond)
			}
		}
	}
	return nil
}

// currentProfiles returns every profile; the slice is shared and must not be modified.
func (c *Controller) currentProfiles() []readiness.Profile {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.profileList == nil {
		c.profileList = make([]readiness.Profile, 0, len(c.profiles))
		for _, p := range c.profiles {
			c.profileList = append(c.profileList, p)
		}
	}
	return c.profileList
}

func (c *Controller) setMatches(clusterKey string, profiles []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.matches[clusterKey] {
		if set := c.matchedBy[p]; set != nil {
			set.Delete(clusterKey)
			if set.Len() == 0 {
				delete(c.matchedBy, p)
			}
		}
	}
	if len(profiles) == 0 {
		delete(c.matches, clusterKey)
		return
	}
	c.matches[clusterKey] = profiles
	for _, p := range profiles {
		if c.matchedBy[p] == nil {
			c.matchedBy[p] = sets.New[string]()
		}
		c.matchedBy[p].Insert(clusterKey)
	}
}
