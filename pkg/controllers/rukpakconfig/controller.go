// Package rukpakconfig keeps the RukPakConfig object in the store equal to what pkg/rukpak
// computes from the current sources. Every source event recomputes it (there is one object);
// an unchanged result emits no watch event.
package rukpakconfig

import (
	"context"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/rukpak"
	"periscope.dev/periscope/pkg/sources"
	"periscope.dev/periscope/pkg/store"
)

// The rukpak resources read.
var (
	Bundles           = schema.GroupResource{Group: "core.rukpak.io", Resource: "bundles"}
	BundleDeployments = schema.GroupResource{Group: "core.rukpak.io", Resource: "bundledeployments"}
)

// SourceResources are the dynamic sources this controller reads, trimmed to the fields used.
func SourceResources() []sources.Resource {
	return []sources.Resource{
		{
			Group: Bundles.Group, Resource: Bundles.Resource, Versions: []string{"v1alpha1"},
			Transform: sources.KeepFields([]string{"spec", "provisionerClassName"}, []string{"status", "phase"}),
		},
		{
			Group: BundleDeployments.Group, Resource: BundleDeployments.Resource, Versions: []string{"v1alpha2", "v1alpha1"},
			Transform: sources.KeepFields([]string{"spec", "provisionerClassName"}, []string{"status", "conditions"}),
		},
	}
}

// Identity is where the singleton's uid and creationTimestamp come from: the kube-system
// namespace, which every replica sees the same and which lives as long as the cluster.
type Identity struct {
	UID     types.UID
	Created metav1.Time
}

// Controller recomputes the RukPakConfig.
type Controller struct {
	namespace string
	dynamic   *sources.DynamicSources
	workloads *sources.Workloads
	store     *store.Store
	identify  func(context.Context) (Identity, error)
	identity  Identity
	queue     workqueue.TypedRateLimitingInterface[string]
}

const queueKey = v1alpha1.RukPakConfigName

// New returns a controller. identify reads the cluster identity (retrying until it can);
// call Enqueue from the sources' change callbacks.
func New(namespace string, store *store.Store, identify func(context.Context) (Identity, error)) *Controller {
	return &Controller{
		namespace: namespace,
		store:     store,
		identify:  identify,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "rukpakconfig"}),
	}
}

// SetSources wires the sources (they are built with the controller's Enqueue as callback).
func (c *Controller) SetSources(dynamic *sources.DynamicSources, workloads *sources.Workloads) {
	c.dynamic, c.workloads = dynamic, workloads
}

// Enqueue asks for a recomputation.
func (c *Controller) Enqueue() { c.queue.Add(queueKey) }

// Run computes until ctx is done, once the sources have synced.
func (c *Controller) Run(ctx context.Context) {
	defer c.queue.ShutDown()
	identity, err := c.identify(ctx)
	if err != nil {
		klog.ErrorS(err, "Reading the cluster identity")
		return
	}
	c.identity = identity
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return c.dynamic.HasSynced() && c.workloads.HasSynced(), nil
	}); err != nil {
		return
	}
	c.Enqueue()
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		for c.processNext() {
		}
	}, time.Second)
	<-ctx.Done()
}

func (c *Controller) processNext() bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(); err != nil {
		klog.ErrorS(err, "Computing the RukPakConfig; retrying")
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

func (c *Controller) sync() error {
	in := c.input()
	obj := &v1alpha1.RukPakConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "RukPakConfig"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              v1alpha1.RukPakConfigName,
			UID:               types.UID(uuid.NewSHA1(uuid.NameSpaceOID, []byte(string(c.identity.UID)+"/"+v1alpha1.GroupName+"/rukpakconfigs/"+v1alpha1.RukPakConfigName)).String()),
			CreationTimestamp: c.identity.Created,
		},
		Status: rukpak.Compute(in),
	}
	changed, err := c.store.Apply(obj)
	if err != nil {
		return err
	}
	if changed {
		klog.V(2).InfoS("RukPakConfig changed", "installed", obj.Status.Installed, "provisioners", len(obj.Status.Provisioners), "classes", len(obj.Status.Classes))
	}
	return nil
}

// Computed reports whether the object has been computed at least once.
func (c *Controller) Computed() bool {
	_, ok := c.store.Get("", v1alpha1.RukPakConfigName)
	return ok
}

func (c *Controller) input() rukpak.Input {
	in := rukpak.Input{
		Namespace: c.namespace,
		Installed: c.dynamic.Served(Bundles) != "" || c.dynamic.Served(BundleDeployments) != "",
		Floor:     c.identity.Created.Time,
	}
	if prev, ok := c.store.Get("", v1alpha1.RukPakConfigName); ok {
		in.Previous = prev.(*v1alpha1.RukPakConfig).Status.Conditions
	}
	for _, d := range c.workloads.Deployments() {
		in.Workloads = append(in.Workloads, rukpak.WorkloadFromDeployment(d))
	}
	for _, s := range c.workloads.StatefulSets() {
		in.Workloads = append(in.Workloads, rukpak.WorkloadFromStatefulSet(s))
	}
	for _, d := range c.workloads.DaemonSets() {
		in.Workloads = append(in.Workloads, rukpak.WorkloadFromDaemonSet(d))
	}
	for _, u := range c.dynamic.List(Bundles) {
		ref, err := rukpak.BundleFromUnstructured(u)
		if err != nil {
			in.Invalid = append(in.Invalid, rukpak.InvalidSource{Kind: "Bundle", Name: u.GetName(), Problem: err.Error()})
			continue
		}
		in.Bundles = append(in.Bundles, ref)
	}
	for _, u := range c.dynamic.List(BundleDeployments) {
		ref, err := rukpak.BundleDeploymentFromUnstructured(u)
		if err != nil {
			in.Invalid = append(in.Invalid, rukpak.InvalidSource{Kind: "BundleDeployment", Name: u.GetName(), Problem: err.Error()})
			continue
		}
		in.BundleDeployments = append(in.BundleDeployments, ref)
	}
	return in
}
