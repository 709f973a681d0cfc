package rukpak

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
)

const ns = "rukpak-system"

func deployment(namespace, name string, desired, ready int32) Workload {
	return Workload{Kind: v1alpha1.WorkloadDeployment, Namespace: namespace, Name: name, Desired: desired, Ready: ready}
}

func optIn(w Workload, classes *string) Workload {
	w.Labels = map[string]string{ProvisionerLabel: "true"}
	if classes != nil {
		w.Annotations = map[string]string{ProvisionerClassesAnnotation: *classes}
	}
	return w
}

func str(s string) *string { return &s }

func bundles(class string, progress ...Progress) []BundleRef {
	var out []BundleRef
	for i, p := range progress {
		out = append(out, BundleRef{Name: fmt.Sprintf("%s-%d", class, i), Class: class, Progress: p})
	}
	return out
}

func concat(lists ...[]BundleRef) []BundleRef {
	var out []BundleRef
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func available(status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: ConditionAvailable, Status: status, Reason: reason, Message: message}
}

var sourcesValid = metav1.Condition{Type: ConditionSourcesValid, Status: metav1.ConditionTrue, Reason: ReasonValid, Message: "every source object could be read"}

func core(state v1alpha1.ProvisionerState, desired, ready int32, message string) v1alpha1.Provisioner {
	return v1alpha1.Provisioner{Namespace: ns, Name: "core", Kind: v1alpha1.WorkloadDeployment,
		ClassNames: []string{ClassPlain, ClassRegistry}, State: state, DesiredReplicas: desired, ReadyReplicas: ready, Message: message}
}

func class(name, format, provisioner string, state v1alpha1.ClassState, b, bd v1alpha1.BundleCounts) v1alpha1.ProvisionerClass {
	return v1alpha1.ProvisionerClass{Name: name, BundleFormat: format, Provisioner: provisioner, State: state, Bundles: b, BundleDeployments: bd}
}

func counts(total, ready, failing, pending int32) v1alpha1.BundleCounts {
	return v1alpha1.BundleCounts{Total: total, Ready: ready, Failing: failing, Pending: pending}
}

var none = counts(0, 0, 0, 0)

func TestCompute(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want v1alpha1.RukPakConfigStatus
	}{
		{
			name: "rukpak not installed",
			in:   Input{Namespace: ns},
			want: v1alpha1.RukPakConfigStatus{Conditions: []metav1.Condition{
				available("False", ReasonNotInstalled, "rukpak is not installed: the API server serves neither bundles nor bundledeployments in core.rukpak.io"),
				sourcesValid,
			}},
		},
		{
			name: "installed without any provisioner",
			in:   Input{Namespace: ns, Installed: true, BundleDeployments: bundles(ClassPlain, Pending)},
			want: v1alpha1.RukPakConfigStatus{Installed: true,
				Classes: []v1alpha1.ProvisionerClass{class(ClassPlain, "plain+v0", "", v1alpha1.ClassMissing, none, counts(1, 0, 0, 1))},
				Conditions: []metav1.Condition{
					available("False", ReasonNoProvisioners, "rukpak is installed but no provisioner workload runs: none of the upstream Deployments exists and no workload is labelled visibility.periscope.dev/provisioner=true"),
					sourcesValid,
				}},
		},
		{
			name: "core running, bundles in every state",
			in: Input{Namespace: ns, Installed: true,
				Workloads:         []Workload{deployment(ns, "core", 1, 1)},
				Bundles:           concat(bundles(ClassPlain, Ready, Failing, Pending), bundles(ClassRegistry, Ready)),
				BundleDeployments: bundles(ClassRegistry, Ready, Failing)},
			want: v1alpha1.RukPakConfigStatus{Installed: true,
				Provisioners: []v1alpha1.Provisioner{core(v1alpha1.ProvisionerRunning, 1, 1, "")},
				Classes: []v1alpha1.ProvisionerClass{
					class(ClassPlain, "plain+v0", ns+"/core", v1alpha1.ClassAvailable, counts(3, 1, 1, 1), none),
					class(ClassRegistry, "registry+v1", ns+"/core", v1alpha1.ClassAvailable, counts(1, 1, 0, 0), counts(2, 1, 1, 0)),
				},
				Conditions: []metav1.Condition{available("True", ReasonAvailable, "1 provisioner running, serving 2 classes"), sourcesValid}},
		},
		{
			name: "helm provisioner scaled to 0 with a waiting bundle deployment",
			in: Input{Namespace: ns, Installed: true,
				Workloads:         []Workload{deployment(ns, "core", 1, 1), deployment(ns, "helm-provisioner", 0, 0)},
				Bundles:           bundles(ClassHelm, Pending, Pending, Pending),
				BundleDeployments: bundles(ClassHelm, Pending)},
			want: v1alpha1.RukPakConfigStatus{Installed: true,
				Provisioners: []v1alpha1.Provisioner{
					core(v1alpha1.ProvisionerRunning, 1, 1, ""),
					{Namespace: ns, Name: "helm-provisioner", Kind: v1alpha1.WorkloadDeployment, ClassNames: []string{ClassHelm}, State: v1alpha1.ProvisionerDisabled, Message: "scaled to 0"},
				},
				Classes: []v1alpha1.ProvisionerClass{
					class(ClassHelm, "helm+v3", ns+"/helm-provisioner", v1alpha1.ClassDisabled, counts(3, 0, 0, 3), counts(1, 0, 0, 1)),
					class(ClassPlain, "plain+v0", ns+"/core", v1alpha1.ClassAvailable, none, none),
					class(ClassRegistry, "registry+v1", ns+"/core", v1alpha1.ClassAvailable, none, none),
				},
				Conditions: []metav1.Condition{
					available("False", ReasonProvisionerDisabled, "core-rukpak-io-helm is served by rukpak-system/helm-provisioner, scaled to 0; 3 bundles and 1 bundle deployment wait for it"),
					sourcesValid,
				}},
		},
		{
			name: "degraded and unavailable provisioners; the most severe gives the reason",
			in: Input{Namespace: ns, Installed: true,
				Workloads:         []Workload{deployment(ns, "core", 2, 1), deployment(ns, "helm-provisioner", 1, 0)},
				BundleDeployments: bundles(ClassHelm, Pending)},
			want: v1alpha1.RukPakConfigStatus{Installed: true,
				Provisioners: []v1alpha1.Provisioner{
					core(v1alpha1.ProvisionerDegraded, 2, 1, "1 of 2 replicas ready"),
					{Namespace: ns, Name: "helm-provisioner", Kind: v1alpha1.WorkloadDeployment, ClassNames: []string{ClassHelm}, State: v1alpha1.ProvisionerUnavailable, DesiredReplicas: 1, Message: "0 of 1 replicas ready"},
				},
				Classes: []v1alpha1.ProvisionerClass{
					class(ClassHelm, "helm+v3", ns+"/helm-provisioner", v1alpha1.ClassUnavailable, none, counts(1, 0, 0, 1)),
					class(ClassPlain, "plain+v0", ns+"/core", v1alpha1.ClassAvailable, none, none),
					class(ClassRegistry, "registry+v1", ns+"/core", v1alpha1.ClassAvailable, none, none),
				},
				Conditions: []metav1.Condition{
					available("False", ReasonProvisionerUnavailable, "core-rukpak-io-helm is served by rukpak-system/helm-provisioner, which has 0 of 1 replicas ready; 1 bundle deployment waits for it; rukpak-system/core has 1 of 2 replicas ready"),
					sourcesValid,
				}},
		},
		{
			name: "a class nobody serves is Missing",
			in: Input{Namespace: ns, Installed: true,
				Workloads:         []Workload{deployment(ns, "core", 1, 1)},
				Bundles:           bundles("acme-io-kustomize", Pending, Pending),
				BundleDeployments: bundles("acme-io-kustomize", Pending)},
			want: v1alpha1.RukPakConfigStatus{Installed: true,
				Provisioners: []v1alpha1.Provisioner{core(v1alpha1.ProvisionerRunning, 1, 1, "")},
				Classes: []v1alpha1.ProvisionerClass{
					class("acme-io-kustomize", "", "", v1alpha1.ClassMissing, counts(2, 0, 0, 2), counts(1, 0, 0, 1)),
					class(ClassPlain, "plain+v0", ns+"/core", v1alpha1.ClassAvailable, none, none),
					class(ClassRegistry, "registry+v1", ns+"/core", v1alpha1.ClassAvailable, none, none),
				},
				Conditions: []metav1.Condition{
					available("False", ReasonClassMissing, "no provisioner serves acme-io-kustomize, which 2 bundles and 1 bundle deployment name"),
					sourcesValid,
				}},
		},
		{
			name: "older single-class upstream provisioners",
			in: Input{Namespace: ns, Installed: true,
				Workloads: []Workload{deployment(ns, "plain-provisioner", 1, 1), deployment(ns, "registry-provisioner", 1, 1)}},
			want: v1alpha1.RukPakConfigStatus{Installed: true,
				Provisioners: []v1alpha1.Provisioner{
					{Namespace: ns, Name: "plain-provisioner", Kind: v1alpha1.WorkloadDeployment, ClassNames: []string{ClassPlain}, State: v1alpha1.ProvisionerRunning, DesiredReplicas: 1, ReadyReplicas: 1},
					{Namespace: ns, Name: "registry-provisioner", Kind: v1alpha1.WorkloadDeployment, ClassNames: []string{ClassRegistry}, State: v1alpha1.ProvisionerRunning, DesiredReplicas: 1, ReadyReplicas: 1},
				},
				Classes: []v1alpha1.ProvisionerClass{
					class(ClassPlain, "plain+v0", ns+"/plain-provisioner", v1alpha1.ClassAvailable, none, none),
					class(ClassRegistry, "registry+v1", ns+"/registry-provisioner", v1alpha1.ClassAvailable, none, none),
				},
				Conditions: []metav1.Condition{available("True", ReasonAvailable, "2 provisioners running, serving 2 classes"), sourcesValid}},
		},
		{
			name: "upstream names elsewhere, or not as Deployments, are not provisioners",
			in: Input{Namespace: ns, Installed: true,
				Workloads: []Workload{
					deployment("other", "core", 1, 1),
					{Kind: v1alpha1.WorkloadStatefulSet, Namespace: ns, Name: "core", Desired: 1, Ready: 1},
				}},
			want: v1alpha1.RukPakConfigStatus{Installed: true, Conditions: []metav1.Condition{
				available("False", ReasonNoProvisioners, "rukpak is installed but no provisioner workload runs: none of the upstream Deployments exists and no workload is labelled visibility.periscope.dev/provisioner=true"),
				sourcesValid,
			}},
		},
		{
			name: "opted-in workloads of every kind; annotations are trimmed, deduplicated, sorted and checked",
			in: Input{Namespace: ns, Installed: true,
				Workloads: []Workload{
					optIn(deployment("acme", "jsonnet", 1, 1), str(" acme-io-jsonnet , acme-io-cue,acme-io-jsonnet,")),
					optIn(Workload{Kind: v1alpha1.WorkloadStatefulSet, Namespace: "acme", Name: "kustomize", Desired: 1, Ready: 1}, str("acme-io-kustomize,Not_Valid")),
					optIn(Workload{Kind: v1alpha1.WorkloadDaemonSet, Namespace: "acme", Name: "carvel", Desired: 3, Ready: 3}, nil),
					optIn(deployment("acme", "empty", 1, 1), str(" , ")),
				}},
			want: v1alpha1.RukPakConfigStatus{Installed: true,
				Provisioners: []v1alpha1.Provisioner{
					{Namespace: "acme", Name: "carvel", Kind: v1alpha1.WorkloadDaemonSet, State: v1alpha1.ProvisionerRunning, DesiredReplicas: 3, ReadyReplicas: 3,
						Message: "annotation visibility.periscope.dev/provisioner-classes is missing: the classes this workload serves are unknown"},
					{Namespace: "acme", Name: "empty", Kind: v1alpha1.WorkloadDeployment, State: v1alpha1.ProvisionerRunning, DesiredReplicas: 1, ReadyReplicas: 1,
						Message: "annotation visibility.periscope.dev/provisioner-classes names no class"},
					{Namespace: "acme", Name: "jsonnet", Kind: v1alpha1.WorkloadDeployment, ClassNames: []string{"acme-io-cue", "acme-io-jsonnet"}, State: v1alpha1.ProvisionerRunning, DesiredReplicas: 1, ReadyReplicas: 1},
					{Namespace: "acme", Name: "kustomize", Kind: v1alpha1.WorkloadStatefulSet, ClassNames: []string{"acme-io-kustomize"}, State: v1alpha1.ProvisionerRunning, DesiredReplicas: 1, ReadyReplicas: 1,
						Message: `annotation visibility.periscope.dev/provisioner-classes names invalid class names "Not_Valid"`},
				},
				Classes: []v1alpha1.ProvisionerClass{
					class("acme-io-cue", "", "acme/jsonnet", v1alpha1.ClassAvailable, none, none),
					class("acme-io-jsonnet", "", "acme/jsonnet", v1alpha1.ClassAvailable, none, none),
					class("acme-io-kustomize", "", "acme/kustomize", v1alpha1.ClassAvailable, none, none),
				},
				Conditions: []metav1.Condition{available("True", ReasonAvailable, "4 provisioners running, serving 3 classes"), sourcesValid}},
		},
		{
			name: "a class served twice is credited to the provisioner in the best state; a workload listed twice counts once",
			in: Input{Namespace: ns, Installed: true,
				Workloads: []Workload{
					deployment(ns, "plain-provisioner", 0, 0),
					deployment(ns, "core", 1, 1),
					deployment(ns, "core", 1, 1),
				}},
			want: v1alpha1.RukPakConfigStatus{Installed: true,
				Provisioners: []v1alpha1.Provisioner{
					core(v1alpha1.ProvisionerRunning, 1, 1, ""),
					{Namespace: ns, Name: "plain-provisioner", Kind: v1alpha1.WorkloadDeployment, ClassNames: []string{ClassPlain}, State: v1alpha1.ProvisionerDisabled, Message: "scaled to 0"},
				},
				Classes: []v1alpha1.ProvisionerClass{
					class(ClassPlain, "plain+v0", ns+"/core", v1alpha1.ClassAvailable, none, none),
					class(ClassRegistry, "registry+v1", ns+"/core", v1alpha1.ClassAvailable, none, none),
				},
				Conditions: []metav1.Condition{
					available("False", ReasonProvisionerDisabled, "rukpak-system/plain-provisioner serves no class in use and is scaled to 0"),
					sourcesValid,
				}},
		},
		{
			name: "the upstream classes of an upstream Deployment can be overridden by opting in",
			in: Input{Namespace: ns, Installed: true,
				Workloads: []Workload{optIn(deployment(ns, "core", 1, 1), str(ClassPlain))}},
			want: v1alpha1.RukPakConfigStatus{Installed: true,
				Provisioners: []v1alpha1.Provisioner{{Namespace: ns, Name: "core", Kind: v1alpha1.WorkloadDeployment, ClassNames: []string{ClassPlain}, State: v1alpha1.ProvisionerRunning, DesiredReplicas: 1, ReadyReplicas: 1}},
				Classes:      []v1alpha1.ProvisionerClass{class(ClassPlain, "plain+v0", ns+"/core", v1alpha1.ClassAvailable, none, none)},
				Conditions:   []metav1.Condition{available("True", ReasonAvailable, "1 provisioner running, serving 1 class"), sourcesValid}},
		},
		{
			name: "invalid sources are reported, at most five by name",
			in: Input{Namespace: ns, Installed: true,
				Workloads: []Workload{deployment(ns, "core", 1, 1)},
				Invalid: []InvalidSource{
					{Kind: "Bundle", Name: "g", Problem: "p"}, {Kind: "Bundle", Name: "b", Problem: "p"}, {Kind: "Bundle", Name: "c", Problem: "p"},
					{Kind: "BundleDeployment", Name: "a", Problem: "q"}, {Kind: "Bundle", Name: "e", Problem: "p"}, {Kind: "Bundle", Name: "f", Problem: "p"},
				}},
			want: v1alpha1.RukPakConfigStatus{Installed: true,
				Provisioners: []v1alpha1.Provisioner{core(v1alpha1.ProvisionerRunning, 1, 1, "")},
				Classes: []v1alpha1.ProvisionerClass{
					class(ClassPlain, "plain+v0", ns+"/core", v1alpha1.ClassAvailable, none, none),
					class(ClassRegistry, "registry+v1", ns+"/core", v1alpha1.ClassAvailable, none, none),
				},
				Conditions: []metav1.Condition{
					available("True", ReasonAvailable, "1 provisioner running, serving 2 classes"),
					{Type: ConditionSourcesValid, Status: "False", Reason: ReasonInvalidSource,
						Message: "6 source objects ignored: Bundle b: p; Bundle c: p; Bundle e: p; Bundle f: p; Bundle g: p; and 1 more"},
				}},
		},
	}
	ignoreTimes := cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.in)
			if diff := cmp.Diff(tt.want, got, ignoreTimes, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Compute (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTransitionTimesFollowStatusChangesAndSourceTimes(t *testing.T) {
	floor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	written := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	running := Input{Namespace: ns, Installed: true, Floor: floor,
		Workloads: []Workload{{Kind: v1alpha1.WorkloadDeployment, Namespace: ns, Name: "core", Desired: 1, Ready: 1, LastWrite: written}}}

	tests := []struct {
		name     string
		previous []metav1.Condition
		in       Input
		want     map[string]metav1.Time
	}{
		{
			name: "first computation: the latest source write",
			in:   running,
			want: map[string]metav1.Time{ConditionAvailable: metav1.NewTime(written), ConditionSourcesValid: metav1.NewTime(written)},
		},
		{
			name:     "unchanged status keeps its time",
			previous: []metav1.Condition{{Type: ConditionAvailable, Status: "True", LastTransitionTime: earlier}, {Type: ConditionSourcesValid, Status: "True", LastTransitionTime: earlier}},
			in:       running,
			want:     map[string]metav1.Time{ConditionAvailable: earlier, ConditionSourcesValid: earlier},
		},
		{
			name:     "changed status moves to the latest source write",
			previous: []metav1.Condition{{Type: ConditionAvailable, Status: "False", LastTransitionTime: earlier}, {Type: ConditionSourcesValid, Status: "True", LastTransitionTime: earlier}},
			in:       running,
			want:     map[string]metav1.Time{ConditionAvailable: metav1.NewTime(written), ConditionSourcesValid: earlier},
		},
		{
			name: "no source at all: the floor",
			in:   Input{Namespace: ns, Floor: floor},
			want: map[string]metav1.Time{ConditionAvailable: metav1.NewTime(floor), ConditionSourcesValid: metav1.NewTime(floor)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Previous = tt.previous
			got := map[string]metav1.Time{}
			for _, c := range Compute(in).Conditions {
				got[c.Type] = c.LastTransitionTime
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("transition times (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeIsDeterministic(t *testing.T) {
	in := Input{Namespace: ns, Installed: true,
		Workloads: []Workload{deployment(ns, "helm-provisioner", 0, 0), deployment(ns, "core", 1, 1),
			optIn(deployment("x", "p", 1, 1), str("b-class,a-class"))},
		Bundles: concat(bundles("z", Pending), bundles("b-class", Ready), bundles(ClassHelm, Pending))}
	first := Compute(in)
	// Reverse every input list: the result must not depend on informer order.
	rev := in
	rev.Workloads = append([]Workload(nil), in.Workloads...)
	rev.Bundles = append([]BundleRef(nil), in.Bundles...)
	for i, j := 0, len(rev.Workloads)-1; i < j; i, j = i+1, j-1 {
		rev.Workloads[i], rev.Workloads[j] = rev.Workloads[j], rev.Workloads[i]
	}
	for i, j := 0, len(rev.Bundles)-1; i < j; i, j = i+1, j-1 {
		rev.Bundles[i], rev.Bundles[j] = rev.Bundles[j], rev.Bundles[i]
	}
	if diff := cmp.Diff(first, Compute(rev)); diff != "" {
		t.Errorf("result depends on input order (-first +reversed):\n%s", diff)
	}
}
