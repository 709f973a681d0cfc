// Package readonly serves the objects of a store.Store as a read-only API resource: get, list
// and watch with kube-apiserver's semantics, and Table output. Each Periscope resource is one
// Config of it; nothing resource-specific lives here.
package readonly

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"

	"periscope.dev/periscope/pkg/store"
)

// Config describes one read-only resource.
type Config struct {
	Store           *store.Store
	Resource        schema.GroupResource
	SingularName    string
	ShortNames      []string
	Categories      []string
	NamespaceScoped bool
	NewFunc         func() runtime.Object
	NewListFunc     func() runtime.Object
	// AttrFunc returns the labels and fields that selectors are matched against.
	AttrFunc storage.AttrFunc
	rest.TableConvertor
	// WrapList, when set, wraps a list for serving with the list's encoding side (CachedList),
	// so that JSON lists reuse each object's cached encoding; nil serves plain lists.
	WrapList func(list runtime.Object, cached CachedList) runtime.Object
	// Ready returns an error until the sources are synced; requests are then refused with 429
	// and a Retry-After, as kube-apiserver does while its watch cache initializes, instead of
	// answering from an empty store.
	Ready func() error
}

// REST is the rest.Storage of a read-only resource. It implements no write verb, so the API
// server answers every write with 405 Method Not Allowed.
type REST struct {
	cfg       Config
	encodings *EncodingCache
}

var (
	_ rest.Storage              = &REST{}
	_ rest.Scoper               = &REST{}
	_ rest.Getter               = &REST{}
	_ rest.Lister               = &REST{}
	_ rest.Watcher              = &REST{}
	_ rest.TableConvertor       = &REST{}
	_ rest.SingularNameProvider = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.CategoriesProvider   = &REST{}
)

// New returns the REST storage for cfg.
func New(cfg Config) *REST {
	r := &REST{cfg: cfg}
	if cfg.WrapList != nil {
		r.encodings = NewEncodingCache(cfg.Store)
	}
	return r
}

func (r *REST) New() runtime.Object     { return r.cfg.NewFunc() }
func (r *REST) NewList() runtime.Object { return r.cfg.NewListFunc() }
func (r *REST) Destroy()                {}
func (r *REST) NamespaceScoped() bool   { return r.cfg.NamespaceScoped }
func (r *REST) GetSingularName() string { return r.cfg.SingularName }
func (r *REST) ShortNames() []string    { return r.cfg.ShortNames }
func (r *REST) Categories() []string    { return r.cfg.Categories }

func (r *REST) ready() error {
	if r.cfg.Ready == nil {
		return nil
	}
	if err := r.cfg.Ready(); err != nil {
		return apierrors.NewTooManyRequests(fmt.Sprintf("%s are not served yet: %v", r.cfg.Resource, err), 1)
	}
	return nil
}

func (r *REST) namespace(ctx context.Context) string {
	if !r.cfg.NamespaceScoped {
		return ""
	}
	return genericapirequest.NamespaceValue(ctx)
}

// Get returns one object.
func (r *REST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if err := r.ready(); err != nil {
		return nil, err
	}
	obj, ok := r.cfg.Store.Get(r.namespace(ctx), name)
	if !ok {
		return nil, apierrors.NewNotFound(r.cfg.Resource, name)
	}
	return obj, nil
}

// List returns the objects that match the options.
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	if err := r.ready(); err != nil {
		return nil, err
	}
	if options == nil {
		options = &metainternalversion.ListOptions{}
	}
	page, err := r.cfg.Store.List(ctx, store.ListOptions{
		Namespace:            r.namespace(ctx),
		Predicate:            r.predicate(options),
		ResourceVersion:      options.ResourceVersion,
		ResourceVersionMatch: options.ResourceVersionMatch,
		// Nothing on the serving path modifies the objects: no copies.
		Shared: true,
	})
	if err != nil {
		return nil, err
	}
	list := r.cfg.NewListFunc()
	if err := meta.SetList(list, page.Items); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("building the list: %w", err))
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("building the list: %w", err))
	}
	listMeta.SetResourceVersion(page.ResourceVersion)
	listMeta.SetContinue(page.Continue)
	listMeta.SetRemainingItemCount(page.RemainingItemCount)
	if r.cfg.WrapList != nil {
		return r.cfg.WrapList(list, NewCachedList(list, page.Items, r.encodings)), nil
	}
	return list, nil
}

// Watch streams changes.
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if err := r.ready(); err != nil {
		return nil, err
	}
	if options == nil {
		options = &metainternalversion.ListOptions{}
	}
	return r.cfg.Store.Watch(ctx, store.WatchOptions{
		Namespace:           r.namespace(ctx),
		Predicate:           r.predicate(options),
		ResourceVersion:     options.ResourceVersion,
		SendInitialEvents:   options.SendInitialEvents,
		AllowWatchBookmarks: options.AllowWatchBookmarks,
		// One encoding per change and encoder, not per watcher.
		Shared: true,
	})
}

func (r *REST) predicate(options *metainternalversion.ListOptions) storage.SelectionPredicate {
	label, field := labels.Everything(), fields.Everything()
	if options.LabelSelector != nil {
		label = options.LabelSelector
	}
	if options.FieldSelector != nil {
		field = options.FieldSelector
	}
	return storage.SelectionPredicate{
		Label:               label,
		Field:               field,
		GetAttrs:            r.cfg.AttrFunc,
		Limit:               options.Limit,
		Continue:            options.Continue,
		AllowWatchBookmarks: options.AllowWatchBookmarks,
	}
}

// ConvertToTable renders objects with the resource's columns.
func (r *REST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.cfg.TableConvertor.ConvertToTable(ctx, object, tableOptions)
}
