package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/clock"
)

// Config configures a Store. NewFunc and Resource are required.
type Config struct {
	// Resource names the stored resource in errors.
	Resource schema.GroupResource
	// NewFunc returns an empty object of the stored type; bookmarks are made of it.
	NewFunc func() runtime.Object
	// Epoch is the high half of every resource version; 0 picks a random one. Tests set it.
	Epoch uint32
	// EventLogSize is how many changes are kept for watches and lists that resume from an
	// older resource version. Older ones get 410 Gone.
	EventLogSize int
	// WatcherBufferSize is how many events a watcher may fall behind before it is closed.
	WatcherBufferSize int
	// SlowWatcherGrace is how long one change may wait, in all, for watchers whose buffer is
	// full to make room before they are closed. It absorbs bursts for watchers that read, and
	// bounds what a watcher that never reads can cost the others (kube-apiserver's cacher
	// has the same kind of dispatch budget).
	SlowWatcherGrace time.Duration
	// BookmarkInterval is how often a watcher that allows bookmarks gets one.
	BookmarkInterval time.Duration
	// FutureRVWait is how long a request for a resource version the store has not reached
	// yet waits before it fails with "too large resource version" (kube-apiserver waits 3s).
	FutureRVWait time.Duration
	// Clock drives bookmarks and waits.
	Clock clock.WithTicker
}

func (c *Config) setDefaults() {
	if c.EventLogSize <= 0 {
		c.EventLogSize = 10000
	}
	if c.WatcherBufferSize <= 0 {
		c.WatcherBufferSize = 1000
	}
	if c.SlowWatcherGrace <= 0 {
		c.SlowWatcherGrace = 100 * time.Millisecond
	}
	if c.BookmarkInterval <= 0 {
		c.BookmarkInterval = 30 * time.Second
	}
	if c.FutureRVWait <= 0 {
		c.FutureRVWait = 3 * time.Second
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Epoch == 0 {
		c.Epoch = randomEpoch()
	}
}

// event is one change. obj is the new state (for Deleted, the last state stamped with the
// deletion's resource version); prev is the state before the change (nil for Added).
type event struct {
	typ  watch.EventType
	key  string
	obj  runtime.Object
	prev runtime.Object
	rv   uint64 // change counter
	// shared holds the objects that watchers in shared mode send; nil for initial events.
	shared *sharedEvent
}

// Store holds the objects of one resource. Objects handed to Apply belong to the store and are
// never mutated afterwards; everything handed out is a deep copy, because the API server's
// encoder writes the type meta of the objects it serializes.
type Store struct {
	cfg       Config
	epoch     uint32
	versioner storage.Versioner

	mu         sync.RWMutex
	counter    uint64 // the change counter of the latest change
	objects    map[string]runtime.Object
	sortedKeys []string // the keys of objects, kept sorted on every insert and delete
	log        ring
	watchers   map[*watcher]struct{}
	changed    chan struct{} // closed and replaced on every change, to wake waiters
}

// New returns an empty store.
func New(cfg Config) *Store {
	cfg.setDefaults()
	return &Store{
		cfg:       cfg,
		epoch:     cfg.Epoch,
		versioner: storage.APIObjectVersioner{},
		counter:   1,
		objects:   map[string]runtime.Object{},
		log:       newRing(cfg.EventLogSize),
		watchers:  map[*watcher]struct{}{},
		changed:   make(chan struct{}),
	}
}

// KeyFor returns the store key of an object: "/namespace/name", or "/name" when cluster-scoped.
func KeyFor(namespace, name string) string {
	if namespace == "" {
		return "/" + name
	}
	return "/" + namespace + "/" + name
}

const keyPrefix = "/"

// ResourceVersion returns the store's current resource version.
func (s *Store) ResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.formatRV(s.counter)
}

// Get returns a copy of the object stored under namespace/name.
func (s *Store) Get(namespace, name string) (runtime.Object, bool) {
	s.mu.RLock()
	obj, ok := s.objects[KeyFor(namespace, name)]
	s.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return obj.DeepCopyObject(), true
}

// Stored reports whether obj is the object stored under namespace/name now (the same
// pointer): caches of derived data (encodings) use it to drop what belongs to replaced objects.
func (s *Store) Stored(namespace, name string, obj runtime.Object) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	cur, ok := s.objects[KeyFor(namespace, name)]
	return ok && cur == obj
}

// Keys returns the keys of all stored objects, sorted.
func (s *Store) Keys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]string(nil), s.sortedKeys...)
}

// Apply makes the stored object under obj's namespace/name equal to obj and reports whether
// that changed anything. An object equal to the stored one (resource version aside) emits no
// event. The store takes ownership of obj.
func (s *Store) Apply(obj runtime.Object) (bool, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return false, fmt.Errorf("apply: %w", err)
	}
	key := KeyFor(accessor.GetNamespace(), accessor.GetName())

	s.mu.Lock()
	defer s.mu.Unlock()
	old, exists := s.objects[key]
	if exists {
		accessor.SetResourceVersion(mustAccessor(old).GetResourceVersion())
		if apiequality.Semantic.DeepEqual(old, obj) {
			return false, nil
		}
	}
	s.counter++
	accessor.SetResourceVersion(s.formatRV(s.counter))
	ev := event{typ: watch.Added, key: key, obj: obj, rv: s.counter, shared: &sharedEvent{}}
	if exists {
		ev.typ, ev.prev = watch.Modified, old
	} else {
		i := sort.SearchStrings(s.sortedKeys, key)
		s.sortedKeys = append(s.sortedKeys, "")
		copy(s.sortedKeys[i+1:], s.sortedKeys[i:])
		s.sortedKeys[i] = key
	}
	s.objects[key] = obj
	s.recordLocked(ev)
	return true, nil
}

// Delete removes the object under namespace/name and reports whether there was one.
func (s *Store) Delete(namespace, name string) bool {
	key := KeyFor(namespace, name)
	s.mu.Lock()
	defer s.mu.Unlock()
	old, exists := s.objects[key]
	if !exists {
		return false
	}
	s.counter++
	tombstone := old.DeepCopyObject()
	mustAccessor(tombstone).SetResourceVersion(s.formatRV(s.counter))
	delete(s.objects, key)
	i := sort.SearchStrings(s.sortedKeys, key)
	s.sortedKeys = append(s.sortedKeys[:i], s.sortedKeys[i+1:]...)
	s.recordLocked(event{typ: watch.Deleted, key: key, obj: tombstone, prev: old, rv: s.counter, shared: &sharedEvent{}})
	return true
}

func (s *Store) recordLocked(ev event) {
	// The log keeps the change without its shared encodings: they are for the watchers of the
	// moment, and kept for the log's length they would hold every encoding of the last
	// EventLogSize changes in memory.
	logged := ev
	logged.shared = nil
	s.log.push(logged)
	var grace clock.Timer
	graceOver := false
	for w := range s.watchers {
		select {
		case w.input <- ev:
			continue
		default:
		}
		if !graceOver {
			if grace == nil {
				grace = s.cfg.Clock.NewTimer(s.cfg.SlowWatcherGrace)
				defer grace.Stop()
			}
			select {
			case w.input <- ev:
				continue
			case <-grace.C():
				graceOver = true
			}
		}
		// The watcher fell a whole buffer behind: close it rather than block everyone else.
		// Its client sees the stream end and watches again from the last version it got.
		s.removeWatcherLocked(w)
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

func sortedKeysOf(objects map[string]runtime.Object) []string {
	keys := make([]string, 0, len(objects))
	for k := range objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// waitForRV blocks until the store has reached change counter want, for at most FutureRVWait.
// It is how kube-apiserver treats a resource version from the future: wait briefly, then fail.
func (s *Store) waitForRV(ctx context.Context, want uint64) error {
	timer := s.cfg.Clock.NewTimer(s.cfg.FutureRVWait)
	defer timer.Stop()
	for {
		s.mu.RLock()
		current, changed := s.counter, s.changed
		s.mu.RUnlock()
		if current >= want {
			return nil
		}
		select {
		case <-changed:
		case <-timer.C():
			return storage.NewTooLargeResourceVersionError(s.encodeRV(want), s.encodeRV(current), 1)
		case <-ctx.Done():
			return apierrors.NewTimeoutError(fmt.Sprintf("waiting for resource version %d: %v", s.encodeRV(want), ctx.Err()), 1)
		}
	}
}

// stateAtLocked returns the objects as they were at change counter rv, rebuilt from the event
// log. The returned map must not be modified when rv is the current counter.
func (s *Store) stateAtLocked(rv uint64) (map[string]runtime.Object, error) {
	if rv == s.counter {
		return s.objects, nil
	}
	if !s.log.covers(rv, s.counter) {
		return nil, s.expired(rv)
	}
	state := make(map[string]runtime.Object, len(s.objects))
	for k, v := range s.objects {
		state[k] = v
	}
	s.log.eachNewerReverse(rv, func(ev event) {
		if ev.prev == nil {
			delete(state, ev.key)
		} else {
			state[ev.key] = ev.prev
		}
	})
	return state, nil
}

func (s *Store) expired(rv uint64) error {
	return apierrors.NewResourceExpired(fmt.Sprintf("resource version %d is too old: the oldest this server can serve is %d", s.encodeRV(rv), s.encodeRV(s.log.oldestServable(s.counter))))
}

func mustAccessor(obj runtime.Object) metav1Object {
	a, err := meta.Accessor(obj)
	if err != nil {
		// Only objects that passed meta.Accessor in Apply are ever stored.
		panic(fmt.Sprintf("stored object without metadata: %v", err))
	}
	return a
}

type metav1Object interface {
	GetResourceVersion() string
	SetResourceVersion(string)
	GetNamespace() string
	GetName() string
}

func namespaceOfKey(key string) string {
	rest := strings.TrimPrefix(key, keyPrefix)
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[:i]
	}
	return ""
}
