package store

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"
)

// WatchOptions selects what a watch delivers.
type WatchOptions struct {
	// Namespace restricts the watch to one namespace; empty means all.
	Namespace string
	Predicate storage.SelectionPredicate
	// ResourceVersion: "" or "0" start from the current state; any other value resumes after it.
	ResourceVersion string
	// SendInitialEvents asks for the current state as ADDED events first (WatchList). When it
	// is true and bookmarks are allowed, the end of the initial events is marked with a
	// bookmark annotated k8s.io/initial-events-end.
	SendInitialEvents   *bool
	AllowWatchBookmarks bool
	// Shared sends the objects of ADDED, MODIFIED and DELETED events as *CachingObject, one per
	// change shared by every watcher, which the API server encodes once per encoder instead of
	// once per watcher. The caller must not modify them. Without it every event carries a copy.
	Shared bool
}

// Watch starts a watch. It returns 400 for a malformed resource version, 410 for one this
// store cannot resume from (too old, or issued by another process), and a "too large resource
// version" timeout for one it has not reached within FutureRVWait.
func (s *Store) Watch(ctx context.Context, opts WatchOptions) (watch.Interface, error) {
	var from uint64
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		var err error
		if from, err = s.parseRV(opts.ResourceVersion); err != nil {
			return nil, err
		}
		if err := s.waitForRV(ctx, from); err != nil {
			return nil, err
		}
	}
	sendInitial := from == 0 // "Get State and Start at Most Recent"
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}

	w := &watcher{
		store:     s,
		input:     make(chan event, s.cfg.WatcherBufferSize),
		result:    make(chan watch.Event),
		done:      make(chan struct{}),
		namespace: opts.Namespace,
		pred:      opts.Predicate,
		bookmarks: opts.AllowWatchBookmarks,
		shared:    opts.Shared,
	}

	s.mu.Lock()
	switch {
	case sendInitial:
		w.backlog = make([]event, 0, len(s.sortedKeys))
		for _, key := range s.sortedKeys {
			obj := s.objects[key]
			w.backlog = append(w.backlog, event{typ: watch.Added, key: key, obj: obj})
		}
		if opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.AllowWatchBookmarks {
			w.initialEventsEnd = true
		}
	case from > 0:
		if !s.log.covers(from, s.counter) {
			err := s.expired(from)
			s.mu.Unlock()
			return nil, err
		}
		s.log.eachNewer(from, func(ev event) { w.backlog = append(w.backlog, ev) })
	}
	w.lastRV = s.counter
	s.watchers[w] = struct{}{}
	s.mu.Unlock()

	go w.run(ctx)
	return w, nil
}

// watcher is one watch. The store pushes every change into input without blocking (a full
// buffer closes the watcher); the watcher's goroutine filters and converts them for its client.
type watcher struct {
	store     *Store
	input     chan event
	result    chan watch.Event
	done      chan struct{}
	stopOnce  sync.Once
	namespace string
	pred      storage.SelectionPredicate
	bookmarks bool
	shared    bool

	backlog          []event // initial state or replayed log, sent before anything from input
	initialEventsEnd bool
	lastRV           uint64 // the change counter the client is known to be up to date with
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

func (w *watcher) Stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.store.mu.Lock()
		w.store.removeWatcherLocked(w)
		w.store.mu.Unlock()
	})
}

func (s *Store) removeWatcherLocked(w *watcher) {
	if _, ok := s.watchers[w]; ok {
		delete(s.watchers, w)
		close(w.input)
	}
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.result)
	defer w.Stop()

	for _, ev := range w.backlog {
		if out, ok := w.convert(ev); ok && !w.send(ctx, out) {
			return
		}
		if ev.rv > 0 { // replayed log events advance the client; initial state is at lastRV
			w.lastRV = ev.rv
		}
	}
	w.backlog = nil
	if w.initialEventsEnd {
		bookmark := w.bookmark()
		if err := storage.AnnotateInitialEventsEndBookmark(bookmark.Object); err != nil {
			klog.ErrorS(err, "Annotating the initial-events-end bookmark")
			return
		}
		if !w.send(ctx, bookmark) {
			return
		}
	}

	ticker := w.store.cfg.Clock.NewTicker(w.store.cfg.BookmarkInterval)
	defer ticker.Stop()
	// The API server ends a watch at its request deadline; a bookmark two seconds before it
	// lets the client resume from the latest version instead of an older one (as the cacher).
	var preTimeout <-chan time.Time
	if deadline, ok := ctx.Deadline(); ok && w.bookmarks {
		if d := deadline.Sub(w.store.cfg.Clock.Now()) - 2*time.Second; d > 0 {
			timer := w.store.cfg.Clock.NewTimer(d)
			defer timer.Stop()
			preTimeout = timer.C()
		}
	}
	for {
		select {
		case ev, open := <-w.input:
			if !open {
				return
			}
			if ev.rv <= w.lastRV {
				continue // already covered by the backlog
			}
			w.lastRV = ev.rv
			if out, ok := w.convert(ev); ok && !w.send(ctx, out) {
				return
			}
		case <-ticker.C():
			// lastRV is exact: every change up to it has been delivered or filtered out, and
			// changes not yet taken from input are all newer.
			if w.bookmarks && !w.send(ctx, w.bookmark()) {
				return
			}
		case <-preTimeout:
			preTimeout = nil
			if !w.send(ctx, w.bookmark()) {
				return
			}
		case <-w.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (w *watcher) send(ctx context.Context, ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	case <-ctx.Done():
		return false
	}
}

func (w *watcher) bookmark() watch.Event {
	obj := w.store.cfg.NewFunc()
	if a, err := meta.Accessor(obj); err == nil {
		a.SetResourceVersion(w.store.formatRV(w.lastRV))
	}
	return watch.Event{Type: watch.Bookmark, Object: obj}
}

// convert turns a change into the event this watcher's client sees: an object that starts to
// match is ADDED, one that stops matching is DELETED, and one that never matched is nothing.
func (w *watcher) convert(ev event) (watch.Event, bool) {
	curMatches := ev.typ != watch.Deleted && w.matches(ev.obj, ev.key)
	prevMatches := ev.prev != nil && w.matches(ev.prev, ev.key)
	switch {
	case curMatches && prevMatches:
		return watch.Event{Type: watch.Modified, Object: w.current(ev)}, true
	case curMatches:
		return watch.Event{Type: watch.Added, Object: w.current(ev)}, true
	case prevMatches:
		return watch.Event{Type: watch.Deleted, Object: w.gone(ev)}, true
	}
	return watch.Event{}, false
}

// current is the object of an ADDED or MODIFIED event.
func (w *watcher) current(ev event) runtime.Object {
	switch {
	case !w.shared:
		return ev.obj.DeepCopyObject()
	case ev.shared == nil: // an initial event: seen by this watcher only
		return newCachingObject(ev.obj)
	}
	ev.shared.curOnce.Do(func() { ev.shared.cur = newCachingObject(ev.obj) })
	return ev.shared.cur
}

// gone is the object of a DELETED event: the client last saw prev; it is told of the deletion
// at this change's version.
func (w *watcher) gone(ev event) runtime.Object {
	build := func() runtime.Object {
		gone := ev.prev.DeepCopyObject()
		mustAccessor(gone).SetResourceVersion(w.store.formatRV(ev.rv))
		return gone
	}
	if !w.shared || ev.shared == nil {
		return build()
	}
	ev.shared.goneOnce.Do(func() { ev.shared.gone = newCachingObject(build()) })
	return ev.shared.gone
}

func (w *watcher) matches(obj runtime.Object, key string) bool {
	ok, err := w.store.matches(obj, key, w.namespace, w.pred)
	if err != nil {
		klog.ErrorS(err, "Evaluating a watch's selectors", "key", key)
		return false
	}
	return ok
}
