package readinessextension

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/extensions/registration"
)

func TestBuildConditions(t *testing.T) {
	reg := registration.Registration{ClientConfig: registration.ClientConfig{URL: "https://checks.example.com"}}
	healthy := v1alpha1.HandlerStatus{Name: "a", Health: v1alpha1.HandlerHealthy}
	unknown := v1alpha1.HandlerStatus{Name: "b", Health: v1alpha1.HandlerUnknown}
	failing := v1alpha1.HandlerStatus{Name: "c", Health: v1alpha1.HandlerFailing, LastError: "Timeout: no answer within 10s"}
	type cond struct{ Type, Status, Reason, Message string }
	tests := []struct {
		name string
		view View
		want []cond
	}{
		{"invalid", View{Invalid: "clientConfig is required"}, []cond{
			{"Valid", "False", "InvalidRegistration", "clientConfig is required"},
			{"Discovered", "False", "InvalidRegistration", "not discovered: the registration is invalid"},
			{"HandlersHealthy", "False", "InvalidRegistration", "not called: the registration is invalid"},
			{"Ready", "False", "InvalidRegistration", "clientConfig is required"},
		}},
		{"not discovered yet", View{Registration: reg}, []cond{
			{"Valid", "True", "Valid", "the registration is valid"},
			{"Discovered", "Unknown", "DiscoveryPending", "not discovered yet"},
			{"HandlersHealthy", "True", "NoneFailing", "no handler failing (0 not called yet)"},
			{"Ready", "Unknown", "DiscoveryPending", "not discovered yet"},
		}},
		{"discovered and healthy", View{Registration: reg, Discovered: true, Handlers: []v1alpha1.HandlerStatus{healthy, unknown}}, []cond{
			{"Valid", "True", "Valid", "the registration is valid"},
			{"Discovered", "True", "Discovered", "2 ClusterReadinessCheck handlers"},
			{"HandlersHealthy", "True", "NoneFailing", "no handler failing (1 not called yet)"},
			{"Ready", "True", "Ready", "discovered, and no handler is failing"},
		}},
		{"a failing handler", View{Registration: reg, Discovered: true, Handlers: []v1alpha1.HandlerStatus{healthy, failing}}, []cond{
			{"Valid", "True", "Valid", "the registration is valid"},
			{"Discovered", "True", "Discovered", "2 ClusterReadinessCheck handlers"},
			{"HandlersHealthy", "False", "HandlersFailing", "1 of 2 handlers failing: c: Timeout: no answer within 10s"},
			{"Ready", "False", "HandlersFailing", "1 of 2 handlers failing: c: Timeout: no answer within 10s"},
		}},
		{"rediscovery failing after a success", View{Registration: reg, Discovered: true, DiscoveryError: "Unreachable: refused", Handlers: []v1alpha1.HandlerStatus{healthy}}, []cond{
			{"Valid", "True", "Valid", "the registration is valid"},
			{"Discovered", "False", "DiscoveryFailed", "Unreachable: refused (the handlers discovered before are kept)"},
			{"HandlersHealthy", "True", "NoneFailing", "no handler failing (0 not called yet)"},
			{"Ready", "False", "DiscoveryFailed", "Unreachable: refused (the handlers discovered before are kept)"},
		}},
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "periscope-system", Name: "ext", UID: "u"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := Build(cm, tt.view, nil, time.Now())
			var got []cond
			for _, c := range obj.Status.Conditions {
				got = append(got, cond{c.Type, string(c.Status), c.Reason, c.Message})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if obj.Name != "ext" || obj.UID != "u" || obj.Spec.ConfigMap != "periscope-system/ext" {
				t.Errorf("identity: %+v", obj.ObjectMeta)
			}
		})
	}
}

func TestBuildKeepsTransitionTimesWhileStatusHolds(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ext"}}
	v := View{Registration: registration.Registration{ClientConfig: registration.ClientConfig{URL: "https://x"}}, Discovered: true}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	first := Build(cm, v, nil, t0)
	second := Build(cm, v, first.Status.Conditions, t0.Add(time.Hour))
	if diff := cmp.Diff(first.Status.Conditions, second.Status.Conditions); diff != "" {
		t.Errorf("conditions moved without a status change (-first +second):\n%s", diff)
	}
	v.DiscoveryError = "Timeout: no answer"
	third := Build(cm, v, second.Status.Conditions, t0.Add(2*time.Hour))
	for _, c := range third.Status.Conditions {
		moved := !c.LastTransitionTime.Time.Equal(t0)
		if want := c.Type == ConditionDiscovered || c.Type == ConditionReady; moved != want {
			t.Errorf("%s moved = %v, want %v", c.Type, moved, want)
		}
	}
}
