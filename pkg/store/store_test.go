package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	clocktesting "k8s.io/utils/clock/testing"
)

const testEpoch = 7

func newTestStore(t *testing.T, mutate ...func(*Config)) *Store {
	t.Helper()
	cfg := Config{
		Resource:     schema.GroupResource{Resource: "configmaps"},
		NewFunc:      func() runtime.Object { return &corev1.ConfigMap{} },
		Epoch:        testEpoch,
		FutureRVWait: 50 * time.Millisecond,
	}
	for _, m := range mutate {
		m(&cfg)
	}
	return New(cfg)
}

func cm(ns, name, value string, lbls ...string) *corev1.ConfigMap {
	c := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data:       map[string]string{"v": value},
	}
	if len(lbls) > 0 {
		c.Labels = map[string]string{}
		for i := 0; i+1 < len(lbls); i += 2 {
			c.Labels[lbls[i]] = lbls[i+1]
		}
	}
	return c
}

func rv(counter uint64) string { return fmt.Sprint(uint64(testEpoch)<<32 | counter) }

func mustApply(t *testing.T, s *Store, obj runtime.Object) {
	t.Helper()
	if _, err := s.Apply(obj); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func pred(label, field string) storage.SelectionPredicate {
	p := storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(), GetAttrs: storage.DefaultNamespaceScopedAttr}
	if label != "" {
		p.Label = labels.SelectorFromSet(labels.Set(mustParseSet(label)))
	}
	if field != "" {
		p.Field = fields.ParseSelectorOrDie(field)
	}
	return p
}

func mustParseSet(s string) map[string]string {
	set, err := labels.ConvertSelectorToLabelsMap(s)
	if err != nil {
		panic(err)
	}
	return set
}

// summary renders objects as "ns/name=value@rv" for compact comparisons.
func summary(objs []runtime.Object) []string {
	out := []string{}
	for _, o := range objs {
		c := o.(*corev1.ConfigMap)
		out = append(out, fmt.Sprintf("%s/%s=%s@%s", c.Namespace, c.Name, c.Data["v"], c.ResourceVersion))
	}
	return out
}

func TestApplyOnlyRecordsChanges(t *testing.T) {
	s := newTestStore(t)
	steps := []struct {
		name        string
		obj         *corev1.ConfigMap
		wantChanged bool
		wantRV      string
	}{
		{"new object", cm("a", "x", "1"), true, rv(2)},
		{"same content", cm("a", "x", "1"), false, rv(2)},
		{"new content", cm("a", "x", "2"), true, rv(3)},
		{"another object", cm("a", "y", "1"), true, rv(4)},
		{"same content again", cm("a", "y", "1"), false, rv(4)},
	}
	for _, step := range steps {
		changed, err := s.Apply(step.obj)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if changed != step.wantChanged {
			t.Errorf("%s: changed = %v, want %v", step.name, changed, step.wantChanged)
		}
		if got := s.ResourceVersion(); got != step.wantRV {
			t.Errorf("%s: store RV = %s, want %s", step.name, got, step.wantRV)
		}
	}
	got, ok := s.Get("a", "x")
	if !ok {
		t.Fatal("a/x not found")
	}
	if diff := cmp.Diff([]string{"a/x=2@" + rv(3)}, summary([]runtime.Object{got})); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	if !s.Delete("a", "x") || s.Delete("a", "x") {
		t.Error("Delete should report true once, then false")
	}
	if _, ok := s.Get("a", "x"); ok {
		t.Error("a/x still there after Delete")
	}
}

func TestGetReturnsACopy(t *testing.T) {
	s := newTestStore(t)
	mustApply(t, s, cm("a", "x", "1"))
	got, _ := s.Get("a", "x")
	got.(*corev1.ConfigMap).Data["v"] = "mutated"
	again, _ := s.Get("a", "x")
	if v := again.(*corev1.ConfigMap).Data["v"]; v != "1" {
		t.Errorf("stored object was mutated through Get: %q", v)
	}
}

func TestList(t *testing.T) {
	s := newTestStore(t)
	mustApply(t, s, cm("b", "two", "1", "env", "prod"))
	mustApply(t, s, cm("a", "one", "1", "env", "dev"))
	mustApply(t, s, cm("b", "one", "1", "env", "prod"))
	mustApply(t, s, cm("a", "one", "2", "env", "dev")) // rv 5
	s.Delete("b", "two")                               // rv 6

	tests := []struct {
		name    string
		opts    ListOptions
		want    []string
		wantRV  string
		wantErr func(error) bool
	}{
		{name: "all, sorted", opts: ListOptions{Predicate: pred("", "")}, want: []string{"a/one=2@" + rv(5), "b/one=1@" + rv(4)}, wantRV: rv(6)},
		{name: "namespace", opts: ListOptions{Namespace: "b", Predicate: pred("", "")}, want: []string{"b/one=1@" + rv(4)}, wantRV: rv(6)},
		{name: "label selector", opts: ListOptions{Predicate: pred("env=dev", "")}, want: []string{"a/one=2@" + rv(5)}, wantRV: rv(6)},
		{name: "field selector", opts: ListOptions{Predicate: pred("", "metadata.name=one,metadata.namespace=b")}, want: []string{"b/one=1@" + rv(4)}, wantRV: rv(6)},
		{name: "exact past version", opts: ListOptions{Predicate: pred("", ""), ResourceVersion: rv(3), ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			want: []string{"a/one=1@" + rv(3), "b/two=1@" + rv(2)}, wantRV: rv(3)},
		{name: "not older than a reached version", opts: ListOptions{Predicate: pred("", ""), ResourceVersion: rv(4), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			want: []string{"a/one=2@" + rv(5), "b/one=1@" + rv(4)}, wantRV: rv(6)},
		{name: "any version", opts: ListOptions{Predicate: pred("", ""), ResourceVersion: "0"}, want: []string{"a/one=2@" + rv(5), "b/one=1@" + rv(4)}, wantRV: rv(6)},
		{name: "malformed version is a 400", opts: ListOptions{Predicate: pred("", ""), ResourceVersion: "abc"}, wantErr: apierrors.IsBadRequest},
		{name: "another process's version is a 410", opts: ListOptions{Predicate: pred("", ""), ResourceVersion: fmt.Sprint(uint64(testEpoch+1)<<32 | 3), ResourceVersionMatch: metav1.ResourceVersionMatchExact}, wantErr: apierrors.IsResourceExpired},
		{name: "future version times out as too large", opts: ListOptions{Predicate: pred("", ""), ResourceVersion: rv(99), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, wantErr: storage.IsTooLargeResourceVersion},
		{name: "unknown match is a 400", opts: ListOptions{Predicate: pred("", ""), ResourceVersion: rv(3), ResourceVersionMatch: "Sometime"}, wantErr: apierrors.IsBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.List(context.Background(), tt.opts)
			if tt.wantErr != nil {
				if err == nil || !tt.wantErr(err) {
					t.Fatalf("err = %v, want a matching error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, summary(got.Items)); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if got.ResourceVersion != tt.wantRV {
				t.Errorf("list RV = %s, want %s", got.ResourceVersion, tt.wantRV)
			}
		})
	}
}

func TestPaginationIsConsistentAcrossChanges(t *testing.T) {
	s := newTestStore(t)
	for i := 0; i < 5; i++ {
		mustApply(t, s, cm("ns", fmt.Sprintf("obj-%d", i), "1"))
	}
	p := pred("", "")
	p.Limit = 2
	page1, err := s.List(context.Background(), ListOptions{Predicate: p})
	if err != nil {
		t.Fatal(err)
	}
	if page1.Continue == "" || page1.RemainingItemCount == nil || *page1.RemainingItemCount != 3 {
		t.Fatalf("page 1: continue=%q remaining=%v, want a token and 3 remaining", page1.Continue, page1.RemainingItemCount)
	}
	// Change the data between pages: the later pages still show the first page's snapshot.
	s.Delete("ns", "obj-3")
	mustApply(t, s, cm("ns", "obj-2", "changed"))
	mustApply(t, s, cm("ns", "obj-9", "new"))

	var names []string
	for _, o := range page1.Items {
		names = append(names, o.(*corev1.ConfigMap).Name)
	}
	token := page1.Continue
	for token != "" {
		p.Continue = token
		page, err := s.List(context.Background(), ListOptions{Predicate: p})
		if err != nil {
			t.Fatal(err)
		}
		if page.ResourceVersion != page1.ResourceVersion {
			t.Errorf("page RV = %s, want the first page's %s", page.ResourceVersion, page1.ResourceVersion)
		}
		for _, o := range page.Items {
			c := o.(*corev1.ConfigMap)
			names = append(names, c.Name+"="+c.Data["v"])
		}
		token = page.Continue
	}
	want := []string{"obj-0", "obj-1", "obj-2=1", "obj-3=1", "obj-4=1"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
}

func TestExpiredContinueTokenIsGone(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.EventLogSize = 4 })
	for i := 0; i < 3; i++ {
		mustApply(t, s, cm("ns", fmt.Sprintf("obj-%d", i), "1"))
	}
	p := pred("", "")
	p.Limit = 1
	page1, err := s.List(context.Background(), ListOptions{Predicate: p})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ { // push the first page's version out of the log
		mustApply(t, s, cm("ns", "churn", fmt.Sprint(i)))
	}
	p.Continue = page1.Continue
	_, err = s.List(context.Background(), ListOptions{Predicate: p})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("err = %v, want 410 Expired", err)
	}
	p.Continue = "not-a-token"
	if _, err := s.List(context.Background(), ListOptions{Predicate: p}); !apierrors.IsBadRequest(err) {
		t.Fatalf("malformed token: err = %v, want 400", err)
	}
}

// collect reads n events from w, failing after a timeout.
func collect(t *testing.T, w watch.Interface, n int) []watch.Event {
	t.Helper()
	var out []watch.Event
	timeout := time.After(5 * time.Second)
	for len(out) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %d of %d events", len(out), n)
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("timed out after %d of %d events", len(out), n)
		}
	}
	return out
}

// expectQuiet fails if w delivers anything within a short while.
func expectQuiet(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("unexpected event %s %v", ev.Type, summary([]runtime.Object{ev.Object}))
		}
	case <-time.After(100 * time.Millisecond):
	}
}

func eventSummary(events []watch.Event) []string {
	out := []string{}
	for _, ev := range events {
		if ev.Type == watch.Bookmark {
			c := ev.Object.(*corev1.ConfigMap)
			out = append(out, fmt.Sprintf("BOOKMARK@%s%v", c.ResourceVersion, c.Annotations))
			continue
		}
		obj := ev.Object
		if co, ok := obj.(*CachingObject); ok {
			obj = co.GetObject()
		}
		out = append(out, string(ev.Type)+" "+summary([]runtime.Object{obj})[0])
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestWatch(t *testing.T) {
	// Each case starts from the same history, then applies "later" changes after the watch
	// has started.
	history := func(s *Store) {
		mustApply(t, s, cm("a", "x", "1", "env", "prod")) // 2
		mustApply(t, s, cm("a", "y", "1", "env", "dev"))  // 3
		mustApply(t, s, cm("a", "x", "2", "env", "prod")) // 4
	}
	later := func(s *Store) {
		mustApply(t, s, cm("a", "y", "2", "env", "prod")) // 5: y starts matching env=prod
		mustApply(t, s, cm("a", "x", "3", "env", "dev"))  // 6: x stops matching env=prod
		s.Delete("a", "y")                                // 7
	}
	tests := []struct {
		name string
		opts WatchOptions
		want []string
	}{
		{
			name: "from 0: current state as ADDED, then changes",
			opts: WatchOptions{ResourceVersion: "0", Predicate: pred("", "")},
			want: []string{"ADDED a/x=2@" + rv(4), "ADDED a/y=1@" + rv(3), "MODIFIED a/y=2@" + rv(5), "MODIFIED a/x=3@" + rv(6), "DELETED a/y=2@" + rv(7)},
		},
		{
			name: "from a list's version: exactly the later changes",
			opts: WatchOptions{ResourceVersion: rv(2), Predicate: pred("", "")},
			want: []string{"ADDED a/y=1@" + rv(3), "MODIFIED a/x=2@" + rv(4), "MODIFIED a/y=2@" + rv(5), "MODIFIED a/x=3@" + rv(6), "DELETED a/y=2@" + rv(7)},
		},
		{
			name: "from the current version: only new changes",
			opts: WatchOptions{ResourceVersion: rv(4), Predicate: pred("", "")},
			want: []string{"MODIFIED a/y=2@" + rv(5), "MODIFIED a/x=3@" + rv(6), "DELETED a/y=2@" + rv(7)},
		},
		{
			name: "label selector: objects that start or stop matching are ADDED or DELETED",
			opts: WatchOptions{ResourceVersion: "0", Predicate: pred("env=prod", "")},
			want: []string{"ADDED a/x=2@" + rv(4), "ADDED a/y=2@" + rv(5), "DELETED a/x=2@" + rv(6), "DELETED a/y=2@" + rv(7)},
		},
		{
			name: "field selector on name",
			opts: WatchOptions{ResourceVersion: rv(2), Predicate: pred("", "metadata.name=y")},
			want: []string{"ADDED a/y=1@" + rv(3), "MODIFIED a/y=2@" + rv(5), "DELETED a/y=2@" + rv(7)},
		},
		{
			name: "other namespace sees nothing",
			opts: WatchOptions{ResourceVersion: "0", Namespace: "b", Predicate: pred("", "")},
			want: []string{},
		},
		{
			name: "sendInitialEvents: state, the initial-events-end bookmark, then changes",
			opts: WatchOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true, Predicate: pred("", "")},
			want: []string{"ADDED a/x=2@" + rv(4), "ADDED a/y=1@" + rv(3), "BOOKMARK@" + rv(4) + "map[k8s.io/initial-events-end:true]",
				"MODIFIED a/y=2@" + rv(5), "MODIFIED a/x=3@" + rv(6), "DELETED a/y=2@" + rv(7)},
		},
		{
			name: "sendInitialEvents=false from unset: only changes",
			opts: WatchOptions{SendInitialEvents: ptr(false), Predicate: pred("", "")},
			want: []string{"MODIFIED a/y=2@" + rv(5), "MODIFIED a/x=3@" + rv(6), "DELETED a/y=2@" + rv(7)},
		},
	}
	for _, tt := range tests {
		for _, shared := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/shared=%v", tt.name, shared), func(t *testing.T) {
				s := newTestStore(t)
				history(s)
				opts := tt.opts
				opts.Shared = shared
				w, err := s.Watch(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				later(s)
				events := collect(t, w, len(tt.want))
				for _, ev := range events {
					if _, isShared := ev.Object.(*CachingObject); ev.Type != watch.Bookmark && isShared != shared {
						t.Errorf("%s event object is %T with shared=%v", ev.Type, ev.Object, shared)
					}
				}
				if diff := cmp.Diff(tt.want, eventSummary(events)); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				expectQuiet(t, w)
			})
		}
	}
}

// TestSharedWatchersEncodeEachChangeOnce: every watcher of a change gets the same object, which
// encodes once per encoder however many watchers write it.
func TestSharedWatchersEncodeEachChangeOnce(t *testing.T) {
	s := newTestStore(t)
	mustApply(t, s, cm("a", "x", "1"))
	var watchers []watch.Interface
	for i := 0; i < 3; i++ {
		w, err := s.Watch(context.Background(), WatchOptions{ResourceVersion: rv(2), Predicate: pred("", ""), Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watchers = append(watchers, w)
	}
	mustApply(t, s, cm("a", "x", "2"))
	s.Delete("a", "x")
	encodes := map[string]int{}
	for _, w := range watchers {
		for _, ev := range collect(t, w, 2) {
			co, ok := ev.Object.(*CachingObject)
			if !ok {
				t.Fatalf("%s event carries %T", ev.Type, ev.Object)
			}
			for _, id := range []runtime.Identifier{"json", "yaml"} {
				var buf bytes.Buffer
				err := co.CacheEncode(id, func(obj runtime.Object, w io.Writer) error {
					encodes[string(ev.Type)+"/"+string(id)]++
					c := obj.(*corev1.ConfigMap)
					c.Data["v"] = "scribbled by the encoder" // must not reach the store
					_, err := fmt.Fprintf(w, "%s:%s@%s", id, c.Name, c.ResourceVersion)
					return err
				}, &buf)
				if err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprintf("%s:x@%s", id, map[watch.EventType]string{watch.Modified: rv(3), watch.Deleted: rv(4)}[ev.Type])
				if buf.String() != want {
					t.Errorf("%s %s encoded %q, want %q", ev.Type, id, buf.String(), want)
				}
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"MODIFIED/json": 1, "MODIFIED/yaml": 1, "DELETED/json": 1, "DELETED/yaml": 1}, encodes); diff != "" {
		t.Errorf("encodes per change and encoder (-want +got):\n%s", diff)
	}
	page, err := s.List(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 0 {
		t.Errorf("list after the deletion: %v", summary(page.Items))
	}
	s.log.eachNewer(0, func(ev event) {
		if ev.shared != nil {
			t.Errorf("the event log keeps the shared encodings of change %d", ev.rv)
		}
	})
}

func TestWatchErrors(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.EventLogSize = 3 })
	for i := 0; i < 10; i++ {
		mustApply(t, s, cm("a", "x", fmt.Sprint(i)))
	}
	tests := []struct {
		name    string
		rv      string
		wantErr func(error) bool
	}{
		{"malformed", "12x", apierrors.IsBadRequest},
		{"negative", "-1", apierrors.IsBadRequest},
		{"too old", rv(2), apierrors.IsResourceExpired},
		{"another replica or an earlier process", fmt.Sprint(uint64(testEpoch+1)<<32 | 5), apierrors.IsResourceExpired},
		{"future", rv(1000), storage.IsTooLargeResourceVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := s.Watch(context.Background(), WatchOptions{ResourceVersion: tt.rv, Predicate: pred("", "")})
			if err == nil {
				w.Stop()
				t.Fatal("want an error")
			}
			if !tt.wantErr(err) {
				t.Fatalf("err = %v, not the expected kind", err)
			}
		})
	}
	// The oldest retained version still works.
	w, err := s.Watch(context.Background(), WatchOptions{ResourceVersion: rv(8), Predicate: pred("", "")})
	if err != nil {
		t.Fatalf("oldest retained version: %v", err)
	}
	w.Stop()
}

func TestWatchWaitsForAFutureVersionItReachesSoon(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.FutureRVWait = 5 * time.Second })
	mustApply(t, s, cm("a", "x", "1")) // 2
	go func() {
		time.Sleep(20 * time.Millisecond)
		mustApply(t, s, cm("a", "x", "2")) // 3
	}()
	w, err := s.Watch(context.Background(), WatchOptions{ResourceVersion: rv(3), Predicate: pred("", "")})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustApply(t, s, cm("a", "x", "3")) // 4
	if diff := cmp.Diff([]string{"MODIFIED a/x=3@" + rv(4)}, eventSummary(collect(t, w, 1))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestSlowWatcherIsClosedWithoutDelayingOthers(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.WatcherBufferSize = 10; c.EventLogSize = 2000 })
	slow, err := s.Watch(context.Background(), WatchOptions{ResourceVersion: s.ResourceVersion(), Predicate: pred("", "")})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Stop()
	const fastWatchers, events = 3, 1000
	var fast []watch.Interface
	results := make(chan []watch.Event, fastWatchers)
	for i := 0; i < fastWatchers; i++ {
		w, err := s.Watch(context.Background(), WatchOptions{ResourceVersion: s.ResourceVersion(), Predicate: pred("", "")})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		fast = append(fast, w)
		go func(w watch.Interface) {
			var got []watch.Event
			for ev := range w.ResultChan() {
				got = append(got, ev)
				if len(got) == events {
					break
				}
			}
			results <- got
		}(w)
	}
	for i := 0; i < events; i++ {
		mustApply(t, s, cm("a", "x", fmt.Sprint(i)))
	}
	for i := 0; i < fastWatchers; i++ {
		select {
		case got := <-results:
			if len(got) != events {
				t.Fatalf("a fast watcher got %d events, want %d", len(got), events)
			}
			for j, ev := range got {
				if v := ev.Object.(*corev1.ConfigMap).Data["v"]; v != fmt.Sprint(j) {
					t.Fatalf("fast watcher event %d has value %s: out of order or lost", j, v)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a fast watcher did not get every event")
		}
	}
	// The slow watcher's stream ends after what it buffered: its client resumes from there.
	received := 0
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-slow.ResultChan():
			if !ok {
				if received > 11 {
					t.Fatalf("slow watcher received %d events, more than its buffer", received)
				}
				return
			}
			received++
		case <-deadline:
			t.Fatal("slow watcher was not closed")
		}
	}
}

func TestPeriodicBookmarks(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	s := newTestStore(t, func(c *Config) { c.Clock = clock; c.BookmarkInterval = time.Minute })
	mustApply(t, s, cm("a", "x", "1")) // 2
	w, err := s.Watch(context.Background(), WatchOptions{ResourceVersion: rv(2), AllowWatchBookmarks: true, Predicate: pred("env=none", "")})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustApply(t, s, cm("a", "x", "2")) // 3: filtered out, but the bookmark still moves to it
	// Wait until the watcher has its ticker and has consumed the change.
	if err := waitFor(func() bool { return clock.HasWaiters() }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	clock.Step(time.Minute)
	got := eventSummary(collect(t, w, 1))
	if diff := cmp.Diff([]string{"BOOKMARK@" + rv(3) + "map[]"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	noBookmarks, err := s.Watch(context.Background(), WatchOptions{ResourceVersion: rv(3), Predicate: pred("", "")})
	if err != nil {
		t.Fatal(err)
	}
	defer noBookmarks.Stop()
	time.Sleep(20 * time.Millisecond)
	clock.Step(time.Minute)
	expectQuiet(t, noBookmarks)
}

func waitFor(cond func() bool) error {
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("condition not met in 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

func TestStopEndsTheResultChannel(t *testing.T) {
	s := newTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := s.Watch(ctx, WatchOptions{Predicate: pred("", "")})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Fatal("unexpected event")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("result channel not closed after the context ended")
	}
	w.Stop() // idempotent
	s.mu.RLock()
	n := len(s.watchers)
	s.mu.RUnlock()
	if n != 0 {
		t.Fatalf("%d watchers still registered", n)
	}
}

func TestBookmarkBeforeTheWatchTimesOut(t *testing.T) {
	s := newTestStore(t) // periodic bookmarks every 30s: far later than the deadline
	mustApply(t, s, cm("a", "x", "1"))
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	w, err := s.Watch(ctx, WatchOptions{ResourceVersion: s.ResourceVersion(), AllowWatchBookmarks: true, Predicate: pred("", "")})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// collect fails if the stream ends first: the bookmark must come before the deadline.
	got := eventSummary(collect(t, w, 1))
	if diff := cmp.Diff([]string{"BOOKMARK@" + rv(2) + "map[]"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestWatchSemanticsMatrix follows k8s.io/apiserver's storage testing RunWatchSemantics: every
// combination of resourceVersion, sendInitialEvents and allowWatchBookmarks, with the initial
// events, the initial-events-end bookmark and the later changes each must give.
func TestWatchSemanticsMatrix(t *testing.T) {
	initialState := []string{"ADDED a/x=2@" + rv(4), "ADDED a/y=1@" + rv(3)}
	replayFrom2 := []string{"ADDED a/y=1@" + rv(3), "MODIFIED a/x=2@" + rv(4)}
	endBookmark := "BOOKMARK@" + rv(4) + "map[k8s.io/initial-events-end:true]"
	later := "MODIFIED a/y=2@" + rv(5)

	for _, resourceVersion := range []string{"", "0", rv(2)} {
		for _, sendInitialEvents := range []*bool{nil, ptr(true), ptr(false)} {
			for _, bookmarks := range []bool{false, true} {
				initial := (sendInitialEvents != nil && *sendInitialEvents) || (sendInitialEvents == nil && (resourceVersion == "" || resourceVersion == "0"))
				var want []string
				switch {
				case initial:
					want = append(want, initialState...)
					if sendInitialEvents != nil && *sendInitialEvents && bookmarks {
						want = append(want, endBookmark)
					}
				case resourceVersion == rv(2):
					want = append(want, replayFrom2...)
				}
				want = append(want, later)
				sie := "nil"
				if sendInitialEvents != nil {
					sie = fmt.Sprint(*sendInitialEvents)
				}
				t.Run(fmt.Sprintf("rv=%q sendInitialEvents=%s bookmarks=%v", resourceVersion, sie, bookmarks), func(t *testing.T) {
					s := newTestStore(t)
					mustApply(t, s, cm("a", "x", "1")) // 2
					mustApply(t, s, cm("a", "y", "1")) // 3
					mustApply(t, s, cm("a", "x", "2")) // 4
					w, err := s.Watch(context.Background(), WatchOptions{
						ResourceVersion: resourceVersion, SendInitialEvents: sendInitialEvents,
						AllowWatchBookmarks: bookmarks, Predicate: pred("", ""),
					})
					if err != nil {
						t.Fatal(err)
					}
					defer w.Stop()
					mustApply(t, s, cm("a", "y", "2")) // 5
					if diff := cmp.Diff(want, eventSummary(collect(t, w, len(want)))); diff != "" {
						t.Errorf("events (-want +got):\n%s", diff)
					}
					expectQuiet(t, w)
				})
			}
		}
	}
}
