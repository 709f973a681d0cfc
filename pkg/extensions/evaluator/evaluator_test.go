package evaluator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/extension"
	"periscope.dev/periscope/pkg/extensions/client"
	"periscope.dev/periscope/pkg/readiness"
)

// fakeCaller answers with f and counts calls and the most calls in flight at once.
type fakeCaller struct {
	f        func(ctx context.Context, req *extension.ClusterReadinessCheckRequest) (client.Answer, error)
	calls    atomic.Int64
	inflight atomic.Int64
	maxSeen  atomic.Int64
}

func (c *fakeCaller) Check(ctx context.Context, _ client.Handler, req *extension.ClusterReadinessCheckRequest) (client.Answer, error) {
	c.calls.Add(1)
	n := c.inflight.Add(1)
	defer c.inflight.Add(-1)
	for {
		m := c.maxSeen.Load()
		if n <= m || c.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	return c.f(ctx, req)
}

func ready(context.Context, *extension.ClusterReadinessCheckRequest) (client.Answer, error) {
	return client.Answer{Ready: true, Message: "fine"}, nil
}

func ext(name string, caller Caller, policy extension.FailurePolicy) Extension {
	return Extension{Name: name, NamespaceSelector: labels.Everything(), ClusterSelector: labels.Everything(),
		Handlers: []client.Handler{{Name: "check", Timeout: time.Second, FailurePolicy: policy}}, Caller: caller, Generation: "1", Discovered: true}
}

func cluster(i int) readiness.Cluster {
	return readiness.Cluster{Namespace: "team-a", Name: fmt.Sprintf("c-%d", i), Labels: map[string]string{"env": "prod"}}
}

// harness runs an evaluator and records the clusters it asked to recompute.
type harness struct {
	*Evaluator
	mu      sync.Mutex
	results map[string]int
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{results: map[string]int{}}
	cfg.OnResult = func(key string) { h.mu.Lock(); h.results[key]++; h.mu.Unlock() }
	h.Evaluator = New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h.Start(ctx)
	return h
}

// settle asks Checks until want(results) or the timeout.
func (h *harness) settle(t *testing.T, c readiness.Cluster, want func([]v1alpha1.CheckResult) bool) []v1alpha1.CheckResult {
	t.Helper()
	var got []v1alpha1.CheckResult
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		got = h.Checks(c, nil)
		return want(got), nil
	})
	if err != nil {
		t.Fatalf("checks of %s never settled; last: %+v", c.Key(), got)
	}
	return got
}

func reasons(rs []v1alpha1.CheckResult) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s/%s:%v:%s", r.Extension, r.Handler, r.Ready, r.Reason))
	}
	return out
}

func TestPendingUntilTheFirstAnswerThenNoCallWithoutChange(t *testing.T) {
	caller := &fakeCaller{f: ready}
	h := newHarness(t, Config{Workers: 2, Resync: time.Hour})
	h.Set(ext("approvals", caller, extension.FailurePolicyFail))
	c := cluster(1)
	first := h.Checks(c, nil)
	if diff := cmp.Diff([]string{"approvals/check:false:Pending"}, reasons(first)); diff != "" {
		t.Fatalf("first checks (-want +got):\n%s", diff)
	}
	got := h.settle(t, c, func(rs []v1alpha1.CheckResult) bool { return rs[0].Reason != readiness.CheckReasonPending })
	if diff := cmp.Diff([]string{"approvals/check:true:Passed"}, reasons(got)); diff != "" {
		t.Errorf("answered checks (-want +got):\n%s", diff)
	}
	if got[0].LastProbeTime.IsZero() || got[0].Message != "fine" {
		t.Errorf("result = %+v", got[0])
	}
	for i := 0; i < 5; i++ {
		h.Checks(c, nil)
	}
	time.Sleep(50 * time.Millisecond)
	if n := caller.calls.Load(); n != 1 {
		t.Errorf("calls = %d, want 1: unchanged inputs must not call again", n)
	}
	// A change of the readiness so far asks again.
	h.Checks(c, []metav1.Condition{{Type: readiness.ConditionAddonsDeployed, Status: metav1.ConditionFalse}})
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return caller.calls.Load() == 2, nil
	}); err != nil {
		t.Errorf("calls = %d after the inputs changed, want 2", caller.calls.Load())
	}
}

func TestFailurePolicies(t *testing.T) {
	unreachable := func(context.Context, *extension.ClusterReadinessCheckRequest) (client.Answer, error) {
		return client.Answer{}, &client.CallError{Reason: client.ReasonTimeout, Err: fmt.Errorf("no answer within 1s")}
	}
	explicitFailure := func(context.Context, *extension.ClusterReadinessCheckRequest) (client.Answer, error) {
		return client.Answer{Failure: true, Message: "scanner down"}, nil
	}
	notReady := func(context.Context, *extension.ClusterReadinessCheckRequest) (client.Answer, error) {
		return client.Answer{Message: "not approved"}, nil
	}
	tests := []struct {
		name   string
		f      func(context.Context, *extension.ClusterReadinessCheckRequest) (client.Answer, error)
		policy extension.FailurePolicy
		want   v1alpha1.CheckResult
		health v1alpha1.HandlerHealth
	}{
		{"Fail: a timeout is not ready", unreachable, extension.FailurePolicyFail,
			v1alpha1.CheckResult{Extension: "x", Handler: "check", Reason: "ExtensionTimeout", Message: "Timeout: no answer within 1s"}, v1alpha1.HandlerFailing},
		{"Ignore: a timeout passes", unreachable, extension.FailurePolicyIgnore,
			v1alpha1.CheckResult{Extension: "x", Handler: "check", Ready: true, Reason: "FailureIgnored", Message: "failurePolicy Ignore: Timeout: no answer within 1s"}, v1alpha1.HandlerFailing},
		{"Ignore: an explicit Failure never passes", explicitFailure, extension.FailurePolicyIgnore,
			v1alpha1.CheckResult{Extension: "x", Handler: "check", Reason: "ExtensionFailure", Message: "scanner down"}, v1alpha1.HandlerHealthy},
		{"Fail: an explicit Failure is not ready", explicitFailure, extension.FailurePolicyFail,
			v1alpha1.CheckResult{Extension: "x", Handler: "check", Reason: "ExtensionFailure", Message: "scanner down"}, v1alpha1.HandlerHealthy},
		{"not ready", notReady, extension.FailurePolicyFail,
			v1alpha1.CheckResult{Extension: "x", Handler: "check", Reason: "NotReady", Message: "not approved"}, v1alpha1.HandlerHealthy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{Workers: 1, Resync: time.Hour, BackoffBase: time.Hour})
			h.Set(ext("x", &fakeCaller{f: tt.f}, tt.policy))
			got := h.settle(t, cluster(1), func(rs []v1alpha1.CheckResult) bool { return rs[0].Reason != readiness.CheckReasonPending })
			if diff := cmp.Diff([]v1alpha1.CheckResult{tt.want}, got, cmpopts.IgnoreFields(v1alpha1.CheckResult{}, "LastProbeTime")); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if health := h.Health("x"); len(health) != 1 || health[0].Health != tt.health {
				t.Errorf("health = %+v, want %s", health, tt.health)
			}
		})
	}
}

func TestConcurrencyIsBoundedPerExtension(t *testing.T) {
	release := make(chan struct{})
	caller := &fakeCaller{f: func(ctx context.Context, _ *extension.ClusterReadinessCheckRequest) (client.Answer, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return client.Answer{Ready: true}, nil
	}}
	h := newHarness(t, Config{Workers: 3, Resync: time.Hour})
	h.Set(ext("slow", caller, extension.FailurePolicyFail))
	for i := 0; i < 30; i++ {
		h.Checks(cluster(i), nil)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return caller.inflight.Load() == 3, nil
	}); err != nil {
		t.Fatalf("in flight = %d, want 3", caller.inflight.Load())
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	h.settle(t, cluster(29), func(rs []v1alpha1.CheckResult) bool { return rs[0].Ready })
	h.settle(t, cluster(0), func(rs []v1alpha1.CheckResult) bool { return rs[0].Ready })
	if m := caller.maxSeen.Load(); m != 3 {
		t.Errorf("most calls in flight = %d, want 3 (the workers)", m)
	}
}

func TestADeadExtensionDelaysNoOther(t *testing.T) {
	dead := &fakeCaller{f: func(ctx context.Context, _ *extension.ClusterReadinessCheckRequest) (client.Answer, error) {
		<-ctx.Done() // hangs until unregistered
		return client.Answer{}, ctx.Err()
	}}
	alive := &fakeCaller{f: ready}
	h := newHarness(t, Config{Workers: 2, Resync: time.Hour})
	h.Set(ext("dead", dead, extension.FailurePolicyFail))
	h.Set(ext("alive", alive, extension.FailurePolicyFail))
	start := time.Now()
	for i := 0; i < 20; i++ {
		if took := func() time.Duration { s := time.Now(); h.Checks(cluster(i), nil); return time.Since(s) }(); took > 100*time.Millisecond {
			t.Fatalf("Checks blocked for %s", took)
		}
	}
	for i := 0; i < 20; i++ {
		got := h.settle(t, cluster(i), func(rs []v1alpha1.CheckResult) bool { return rs[0].Extension == "alive" && rs[0].Ready })
		if diff := cmp.Diff([]string{"alive/check:true:Passed", "dead/check:false:Pending"}, reasons(got)); diff != "" {
			t.Errorf("cluster %d (-want +got):\n%s", i, diff)
		}
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the live extension took %s to answer 20 clusters", took)
	}
	h.Remove("dead")
	if diff := cmp.Diff([]string{"alive/check:true:Passed"}, reasons(h.Checks(cluster(0), nil))); diff != "" {
		t.Errorf("after removing the dead extension (-want +got):\n%s", diff)
	}
}

func TestBackoffFromAFailingHandlerAndRecovery(t *testing.T) {
	var broken atomic.Bool
	broken.Store(true)
	caller := &fakeCaller{f: func(context.Context, *extension.ClusterReadinessCheckRequest) (client.Answer, error) {
		if broken.Load() {
			return client.Answer{}, &client.CallError{Reason: client.ReasonUnreachable, Err: fmt.Errorf("connection refused")}
		}
		return client.Answer{Ready: true}, nil
	}}
	h := newHarness(t, Config{Workers: 1, Resync: time.Hour, BackoffBase: 300 * time.Millisecond, BackoffMax: 300 * time.Millisecond})
	h.Set(ext("flaky", caller, extension.FailurePolicyFail))
	for i := 0; i < 20; i++ {
		h.Checks(cluster(i), nil)
	}
	for i := 0; i < 20; i++ {
		h.settle(t, cluster(i), func(rs []v1alpha1.CheckResult) bool { return rs[0].Reason == "ExtensionUnreachable" })
	}
	if n := caller.calls.Load(); n > 2 {
		t.Errorf("calls while failing = %d: the other clusters must be answered from the backoff, not called", n)
	}
	if health := h.Health("flaky"); health[0].Health != v1alpha1.HandlerFailing || health[0].LastError != "Unreachable: connection refused" {
		t.Errorf("health = %+v", health)
	}
	broken.Store(false)
	for i := 0; i < 20; i++ {
		h.settle(t, cluster(i), func(rs []v1alpha1.CheckResult) bool { return rs[0].Reason == ReasonPassed })
	}
	if health := h.Health("flaky"); health[0].Health != v1alpha1.HandlerHealthy || health[0].LastError != "" {
		t.Errorf("health after recovery = %+v", health)
	}
}

func TestRetryAfterAsksAgain(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	var answer atomic.Bool
	caller := &fakeCaller{f: func(context.Context, *extension.ClusterReadinessCheckRequest) (client.Answer, error) {
		return client.Answer{Ready: answer.Load(), RetryAfter: 10 * time.Second}, nil
	}}
	h := newHarness(t, Config{Workers: 1, Resync: time.Hour, Clock: clk})
	h.Set(ext("approvals", caller, extension.FailurePolicyFail))
	c := cluster(1)
	h.Checks(c, nil)
	h.settle(t, c, func(rs []v1alpha1.CheckResult) bool { return rs[0].Reason == ReasonNotReady })
	answer.Store(true)
	clk.Step(11 * time.Second)
	got := h.settle(t, c, func(rs []v1alpha1.CheckResult) bool { return rs[0].Ready })
	if got[0].LastProbeTime.Time != clk.Now().Truncate(time.Second) {
		t.Errorf("lastProbeTime = %v, want the probe's time %v", got[0].LastProbeTime, clk.Now())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.results[c.Key()] != 2 {
		t.Errorf("recompute requests = %d, want 2 (the first answer and the flip)", h.results[c.Key()])
	}
}

func TestSelectorsAndNewGenerations(t *testing.T) {
	caller := &fakeCaller{f: ready}
	h := newHarness(t, Config{Workers: 1, Resync: time.Hour, NamespaceLabels: func(ns string) labels.Set {
		return map[string]labels.Set{"team-a": {"tier": "gold"}}[ns]
	}})
	e := ext("gold", caller, extension.FailurePolicyFail)
	e.NamespaceSelector = labels.SelectorFromSet(labels.Set{"tier": "gold"})
	e.ClusterSelector = labels.SelectorFromSet(labels.Set{"env": "prod"})
	h.Set(e)
	other := readiness.Cluster{Namespace: "team-b", Name: "x", Labels: map[string]string{"env": "prod"}}
	dev := readiness.Cluster{Namespace: "team-a", Name: "dev", Labels: map[string]string{"env": "dev"}}
	if got := h.Checks(other, nil); len(got) != 0 {
		t.Errorf("a cluster in an unselected namespace got checks: %+v", got)
	}
	if got := h.Checks(dev, nil); len(got) != 0 {
		t.Errorf("an unselected cluster got checks: %+v", got)
	}
	c := cluster(1)
	h.Checks(c, nil)
	h.settle(t, c, func(rs []v1alpha1.CheckResult) bool { return len(rs) == 1 && rs[0].Ready })
	// A new generation asks again but keeps the answer meanwhile: Ready does not go Unknown.
	e.Generation = "2"
	e.Settings = map[string]string{"k": "v"}
	h.Set(e)
	if got := h.Checks(c, nil); len(got) != 1 || !got[0].Ready {
		t.Errorf("after a new generation: %+v, want the previous answer kept", got)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return caller.calls.Load() == 2, nil
	}); err != nil {
		t.Errorf("calls = %d, want 2 after a new generation", caller.calls.Load())
	}
	// The same generation again is a no-op.
	h.Set(e)
	h.Checks(c, nil)
	time.Sleep(50 * time.Millisecond)
	if n := caller.calls.Load(); n != 2 {
		t.Errorf("calls = %d after setting the same generation, want 2", n)
	}
}

func TestAnUndiscoveredExtensionDoesNotPassSilently(t *testing.T) {
	h := newHarness(t, Config{Workers: 1})
	e := Extension{Name: "new", NamespaceSelector: labels.Everything(), ClusterSelector: labels.Everything(), Generation: "1"}
	h.Set(e)
	if diff := cmp.Diff([]string{"new/discovery:false:Pending"}, reasons(h.Checks(cluster(1), nil))); diff != "" {
		t.Errorf("before discovery (-want +got):\n%s", diff)
	}
	e.Generation, e.DiscoveryError = "2", "Unreachable: connection refused"
	h.Set(e)
	got := h.Checks(cluster(1), nil)
	if diff := cmp.Diff([]string{"new/discovery:false:ExtensionDiscoveryFailed"}, reasons(got)); diff != "" {
		t.Errorf("after a failed discovery (-want +got):\n%s", diff)
	}
	if got[0].Message != "Unreachable: connection refused" {
		t.Errorf("message = %q", got[0].Message)
	}
}
