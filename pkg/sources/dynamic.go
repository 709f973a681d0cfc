// Package sources watches the objects Periscope computes from. Resources of other projects
// (rukpak, Sveltos, Cluster API) are read with dynamic informers that are started when
// discovery shows their API and stopped when it goes away, so that CRDs installed or removed
// after start-up are followed without a restart.
package sources

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Resource is a resource of another project that Periscope reads.
type Resource struct {
	Group    string
	Resource string
	// Versions this build understands, most preferred first. The version the server prefers
	// is taken when it is one of them; otherwise the first of them that is served.
	Versions []string
	// Transform trims cached objects to what the computation reads.
	Transform cache.TransformFunc
	// Indexers are added to the informer.
	Indexers cache.Indexers
	// Handler receives the object events; when nil, every event calls the sources' onChange.
	Handler cache.ResourceEventHandler
}

// GroupResource returns the group and resource.
func (r Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Resource}
}

// DynamicSources runs one dynamic informer per served Resource and follows discovery.
type DynamicSources struct {
	discovery discovery.DiscoveryInterface
	client    dynamic.Interface
	resources []Resource
	interval  time.Duration
	onChange  func()

	mu         sync.RWMutex
	discovered bool
	active     map[schema.GroupResource]*running
}

type running struct {
	version  string
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
}

// NewDynamicSources returns sources for resources. onChange is called whenever one starts or
// stops being served (its objects appear or vanish at once), and on every object event of a
// resource without a Handler.
func NewDynamicSources(disco discovery.DiscoveryInterface, client dynamic.Interface, resources []Resource, interval time.Duration, onChange func()) *DynamicSources {
	return &DynamicSources{
		discovery: disco,
		client:    client,
		resources: resources,
		interval:  interval,
		onChange:  onChange,
		active:    map[schema.GroupResource]*running{},
	}
}

// Run follows discovery until ctx is done.
func (d *DynamicSources) Run(ctx context.Context) {
	wait.UntilWithContext(ctx, d.reconcile, d.interval)
	d.mu.Lock()
	defer d.mu.Unlock()
	for gr, r := range d.active {
		r.cancel()
		delete(d.active, gr)
	}
}

// HasSynced is true once discovery has been read and every started informer has synced.
func (d *DynamicSources) HasSynced() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if !d.discovered {
		return false
	}
	for _, r := range d.active {
		if !r.informer.HasSynced() {
			return false
		}
	}
	return true
}

// Served returns the version of gr that is read, or "" when it is not served.
func (d *DynamicSources) Served(gr schema.GroupResource) string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if r, ok := d.active[gr]; ok {
		return r.version
	}
	return ""
}

// List returns the cached objects of gr (nil when it is not served). The objects are shared
// with the cache and must not be modified.
func (d *DynamicSources) List(gr schema.GroupResource) []*unstructured.Unstructured {
	d.mu.RLock()
	r, ok := d.active[gr]
	d.mu.RUnlock()
	if !ok {
		return nil
	}
	items := r.informer.GetStore().List()
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, item := range items {
		if u, ok := item.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// GetByKey returns the cached object of gr with key namespace/name (or name).
func (d *DynamicSources) GetByKey(gr schema.GroupResource, key string) (*unstructured.Unstructured, bool) {
	inf := d.Informer(gr)
	if inf == nil {
		return nil, false
	}
	item, exists, err := inf.GetStore().GetByKey(key)
	if err != nil || !exists {
		return nil, false
	}
	u, ok := item.(*unstructured.Unstructured)
	return u, ok
}

// ByIndex returns the cached objects of gr whose index name has value.
func (d *DynamicSources) ByIndex(gr schema.GroupResource, name, value string) []*unstructured.Unstructured {
	inf := d.Informer(gr)
	if inf == nil {
		return nil
	}
	items, err := inf.GetIndexer().ByIndex(name, value)
	if err != nil {
		klog.ErrorS(err, "Reading an informer index", "resource", gr, "index", name)
		return nil
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, item := range items {
		if u, ok := item.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// Informer returns the informer of gr, for indexes and event handlers, or nil.
func (d *DynamicSources) Informer(gr schema.GroupResource) cache.SharedIndexInformer {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if r, ok := d.active[gr]; ok {
		return r.informer
	}
	return nil
}

func (d *DynamicSources) reconcile(ctx context.Context) {
	served, err := d.servedVersions()
	if err != nil {
		klog.ErrorS(err, "Reading discovery; keeping the sources as they are")
		return
	}
	changed := false
	d.mu.Lock()
	for _, res := range d.resources {
		gr := res.GroupResource()
		want := pickVersion(res.Versions, served[res.Group])
		if want != "" {
			ok, err := d.hasResource(schema.GroupVersion{Group: res.Group, Version: want}, res.Resource)
			if err != nil {
				klog.ErrorS(err, "Reading discovery", "group", res.Group, "version", want)
				continue
			}
			if !ok {
				want = ""
			}
		}
		cur, running := d.active[gr]
		switch {
		case running && cur.version == want:
			continue
		case running:
			klog.InfoS("Source no longer served in this version; stopping its informer", "resource", gr, "version", cur.version)
			cur.cancel()
			delete(d.active, gr)
			changed = true
		}
		if want != "" {
			klog.InfoS("Source served; starting its informer", "resource", gr, "version", want)
			d.active[gr] = d.start(ctx, res, want)
			changed = true
		}
	}
	d.discovered = true
	d.mu.Unlock()
	if changed {
		d.onChange()
	}
}

func (d *DynamicSources) start(ctx context.Context, res Resource, version string) *running {
	gvr := schema.GroupVersionResource{Group: res.Group, Version: version, Resource: res.Resource}
	indexers := cache.Indexers{}
	for name, f := range res.Indexers {
		indexers[name] = f
	}
	informer := dynamicinformer.NewFilteredDynamicInformer(d.client, gvr, "", 0, indexers, nil).Informer()
	if res.Transform != nil {
		if err := informer.SetTransform(res.Transform); err != nil {
			klog.ErrorS(err, "Setting the informer transform", "resource", gvr)
		}
	}
	handler := res.Handler
	if handler == nil {
		handler = ChangeHandler(d.onChange)
	}
	if _, err := informer.AddEventHandler(handler); err != nil {
		klog.ErrorS(err, "Adding an informer event handler", "resource", gvr)
	}
	ictx, cancel := context.WithCancel(ctx)
	go informer.RunWithContext(ictx)
	return &running{version: version, informer: informer, cancel: cancel}
}

// servedVersions returns, per API group of interest, the served versions with the server's
// preferred one first.
func (d *DynamicSources) servedVersions() (map[string][]string, error) {
	groups, err := d.discovery.ServerGroups()
	if err != nil {
		return nil, fmt.Errorf("listing API groups: %w", err)
	}
	out := map[string][]string{}
	for _, g := range groups.Groups {
		versions := []string{g.PreferredVersion.Version}
		for _, v := range g.Versions {
			if v.Version != g.PreferredVersion.Version {
				versions = append(versions, v.Version)
			}
		}
		out[g.Name] = versions
	}
	return out, nil
}

func (d *DynamicSources) hasResource(gv schema.GroupVersion, resource string) (bool, error) {
	list, err := d.discovery.ServerResourcesForGroupVersion(gv.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("listing resources of %s: %w", gv, err)
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true, nil
		}
	}
	return false, nil
}

// pickVersion returns the served version to read: the server's preferred one when this build
// understands it, else the first understood one that is served.
func pickVersion(understood, served []string) string {
	if len(served) > 0 && slices.Contains(understood, served[0]) {
		return served[0]
	}
	for _, v := range understood {
		if slices.Contains(served, v) {
			return v
		}
	}
	return ""
}

// ChangeHandler calls f on every add, update and delete.
func ChangeHandler(f func()) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { f() },
		UpdateFunc: func(interface{}, interface{}) { f() },
		DeleteFunc: func(interface{}) { f() },
	}
}
