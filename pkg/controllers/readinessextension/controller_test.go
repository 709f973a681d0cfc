package readinessextension

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/extension"
	"periscope.dev/periscope/pkg/extensions/client"
	"periscope.dev/periscope/pkg/extensions/evaluator"
	"periscope.dev/periscope/pkg/extensions/registration"
	"periscope.dev/periscope/pkg/registry/visibility/readinessextension"
	"periscope.dev/periscope/pkg/store"
)

// fakeDiscoverer answers discovery with handlers or err.
type fakeDiscoverer struct {
	mu       sync.Mutex
	handlers []client.Handler
	err      error
}

func (f *fakeDiscoverer) Discover(context.Context, time.Duration) ([]client.Handler, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handlers, f.err
}

func (f *fakeDiscoverer) set(handlers []client.Handler, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers, f.err = handlers, err
}
func (f *fakeDiscoverer) Check(context.Context, client.Handler, *extension.ClusterReadinessCheckRequest) (client.Answer, error) {
	return client.Answer{Ready: true}, nil
}
func (f *fakeDiscoverer) Close() {}

// warnings records Events once leading is set, as the Lease holder would.
type warnings struct {
	mu      sync.Mutex
	leading bool
	list    []string
}

func (w *warnings) Warn(ref *corev1.ObjectReference, reason, _, _ string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.leading {
		return false
	}
	w.list = append(w.list, ref.Kind+"/"+ref.Name+":"+reason)
	return true
}

func (w *warnings) lead() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.leading = true
}

func (w *warnings) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

func registrationCM(name, clientConfig string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "periscope-system", Name: name, UID: "uid-" + "name",
			Labels: map[string]string{registration.Label: "true"}},
		Data: map[string]string{registration.KeyClientConfig: clientConfig},
	}
}

func TestRegistrations(t *testing.T) {
	externalName := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "periscope-system", Name: "approvals"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
	kube := fake.NewClientset(externalName,
		registrationCM("good", "service: {namespace: periscope-system, name: approvals, port: 9443}"),
		registrationCM("typo", "urll: https://x"),
		registrationCM("down", "url: https://down.example.com"),
	)
	var mu sync.Mutex
	targets := map[string]client.Target{}
	discoverers := map[string]*fakeDiscoverer{
		"https://localhost:9443":   {handlers: []client.Handler{{Name: "approved", Timeout: 5 * time.Second, FailurePolicy: extension.FailurePolicyFail}}},
		"https://down.example.com": {err: &client.CallError{Reason: client.ReasonUnreachable, Err: errors.New("connection refused")}},
	}
	changes := 0
	st := readinessextension.NewStore(store.Config{})
	eval := evaluator.New(evaluator.Config{Workers: 1})
	w := &warnings{}
	c := New(Config{
		Namespace: "periscope-system", Client: kube, Store: st, Evaluator: eval, Warner: w,
		OnChange:  func() { mu.Lock(); changes++; mu.Unlock() },
		WarnRetry: 100 * time.Millisecond,
		NewDiscoverer: func(t client.Target) (Discoverer, error) {
			mu.Lock()
			defer mu.Unlock()
			targets[t.BaseURL] = t
			return discoverers[t.BaseURL], nil
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eval.Start(ctx)
	go c.Run(ctx, 2)
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return c.Synced() && len(st.Keys()) == 3, nil
	}); err != nil {
		t.Fatalf("not synced: synced=%v keys=%v", c.Synced(), st.Keys())
	}

	ready := func(name string) (metav1.ConditionStatus, string, *v1alpha1.ReadinessExtension) {
		obj, ok := st.Get("", name)
		if !ok {
			t.Fatalf("no ReadinessExtension %s", name)
		}
		re := obj.(*v1alpha1.ReadinessExtension)
		for _, cond := range re.Status.Conditions {
			if cond.Type == ConditionReady {
				return cond.Status, cond.Reason, re
			}
		}
		t.Fatalf("%s has no Ready condition", name)
		return "", "", nil
	}

	status, reason, good := ready("good")
	if status != metav1.ConditionTrue || reason != ReasonReady {
		t.Errorf("good: Ready %s/%s, want True/Ready; %+v", status, reason, good.Status)
	}
	if diff := cmp.Diff([]v1alpha1.HandlerStatus{{Name: "approved", TimeoutSeconds: 5, FailurePolicy: "Fail", Health: v1alpha1.HandlerUnknown}}, good.Status.Handlers); diff != "" {
		t.Errorf("good handlers (-want +got):\n%s", diff)
	}
	if good.Spec.Endpoint != "service periscope-system/approvals:9443" || good.Spec.ConfigMap != "periscope-system/good" {
		t.Errorf("good spec = %+v", good.Spec)
	}
	mu.Lock()
	if got := targets["https://localhost:9443"]; got.ServerName != "approvals.periscope-system.svc" {
		t.Errorf("the ExternalName service is dialled at %+v, want localhost with the service's TLS name", got)
	}
	mu.Unlock()

	status, reason, typo := ready("typo")
	if status != metav1.ConditionFalse || reason != ReasonInvalidRegistration || typo.Status.Conditions[0].Message == "" {
		t.Errorf("typo: Ready %s/%s, want False/InvalidRegistration; %+v", status, reason, typo.Status)
	}
	status, reason, down := ready("down")
	if status != metav1.ConditionFalse || reason != ReasonDiscoveryFailed || down.Status.DiscoveryError != "Unreachable: connection refused" {
		t.Errorf("down: Ready %s/%s, want False/DiscoveryFailed; %+v", status, reason, down.Status)
	}
	if got := w.get(); len(got) != 0 {
		t.Errorf("events recorded without leading: %v", got)
	}
	// The problems found before this replica led are recorded once it leads.
	w.lead()
	wantWarnings := []string{"ConfigMap/down:DiscoveryFailed", "ConfigMap/typo:InvalidRegistration"}
	var got []string
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		got = w.get()
		return len(got) >= 2, nil
	})
	if len(got) == 2 && got[0] > got[1] {
		got[0], got[1] = got[1], got[0]
	}
	if diff := cmp.Diff(wantWarnings, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// A failed discovery is retried soon, not after the (default one minute) interval.
	discoverers["https://down.example.com"].set([]client.Handler{{Name: "x", Timeout: time.Second, FailurePolicy: extension.FailurePolicyIgnore}}, nil)
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		status, _, _ := ready("down")
		return status == metav1.ConditionTrue, nil
	}); err != nil {
		_, reason, _ := ready("down")
		t.Errorf("the extension that came back is still %s", reason)
	}
	discoverers["https://down.example.com"].set(nil, &client.CallError{Reason: client.ReasonUnreachable, Err: errors.New("connection refused")})

	// Fixing the typo makes it valid without a restart; deleting a registration removes it.
	fixed := registrationCM("typo", "url: https://down.example.com")
	fixed.ResourceVersion = "2"
	if _, err := kube.CoreV1().ConfigMaps("periscope-system").Update(ctx, fixed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ConfigMaps("periscope-system").Delete(ctx, "good", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, stillThere := st.Get("", "good")
		status, reason, _ := ready("typo")
		// "typo" now points where "down" is: discovered (True) or, once it fails again, failing.
		return !stillThere && (status == metav1.ConditionTrue || reason == ReasonDiscoveryFailed), nil
	}); err != nil {
		_, reason, _ := ready("typo")
		t.Errorf("after the edits: good removed? typo reason %s", reason)
	}
	if h := eval.Health("good"); h != nil {
		t.Errorf("the evaluator still has the removed registration: %+v", h)
	}
	mu.Lock()
	defer mu.Unlock()
	if changes < 2 {
		t.Errorf("OnChange called %d times, want at least 2 (good discovered, good removed)", changes)
	}
}
