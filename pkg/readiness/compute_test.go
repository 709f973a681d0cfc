package readiness

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
)

func capi(ns, name string, lbls map[string]string) Cluster {
	return Cluster{Type: v1alpha1.ClusterTypeCapi, APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster",
		Namespace: ns, Name: name, Labels: lbls, Availability: Availability{Available: true, Message: "up"}}
}

func sveltos(ns, name string, lbls map[string]string) Cluster {
	c := capi(ns, name, lbls)
	c.Type, c.APIVersion, c.Kind = v1alpha1.ClusterTypeSveltos, "lib.projectsveltos.io/v1beta1", "SveltosCluster"
	return c
}

// profile builds a profile from a ClusterProfile/Profile document, through the extractor.
func profile(t *testing.T, doc string) Profile {
	t.Helper()
	return ProfileFromUnstructured(parse(t, doc))
}

func summary(ns, name, cluster string, ct v1alpha1.ClusterType, kind, profile string, features ...v1alpha1.FeatureStatus) Summary {
	return Summary{Namespace: ns, Name: name, ClusterName: cluster, ClusterType: ct, ProfileKind: kind, ProfileName: profile, Features: features}
}

func feature(id, status, msg string) v1alpha1.FeatureStatus {
	return v1alpha1.FeatureStatus{FeatureID: id, Status: status, FailureMessage: msg}
}

func TestMatches(t *testing.T) {
	prod := capi("team-a", "prod-1", map[string]string{"env": "prod", "tier": "gold"})
	tests := []struct {
		name    string
		profile string
		cluster Cluster
		want    bool
	}{
		{"matchLabels", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterSelector":{"matchLabels":{"env":"prod"}}}}`, prod, true},
		{"matchLabels mismatch", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterSelector":{"matchLabels":{"env":"dev"}}}}`, prod, false},
		{"matchExpressions In", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterSelector":{"matchExpressions":[{"key":"env","operator":"In","values":["staging","prod"]}]}}}`, prod, true},
		{"matchExpressions NotIn", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterSelector":{"matchExpressions":[{"key":"tier","operator":"NotIn","values":["gold"]}]}}}`, prod, false},
		{"matchExpressions DoesNotExist", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterSelector":{"matchExpressions":[{"key":"legacy","operator":"DoesNotExist"}]}}}`, prod, true},
		{"labels and expressions together", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterSelector":{"matchLabels":{"env":"prod"},"matchExpressions":[{"key":"tier","operator":"Exists"}]}}}`, prod, true},
		{"empty selector matches nothing", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterSelector":{}}}`, prod, false},
		{"no selector matches nothing", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{}}`, prod, false},
		{"clusterRefs names a Cluster", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterRefs":[{"kind":"Cluster","namespace":"team-a","name":"prod-1"}]}}`, prod, true},
		{"clusterRefs of the other kind", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterRefs":[{"kind":"SveltosCluster","namespace":"team-a","name":"prod-1"}]}}`, prod, false},
		{"clusterRefs names a SveltosCluster", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterRefs":[{"kind":"SveltosCluster","namespace":"team-a","name":"prod-1"}]}}`, sveltos("team-a", "prod-1", nil), true},
		{"DryRun deploys nothing", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"syncMode":"DryRun","clusterSelector":{"matchLabels":{"env":"prod"}}}}`, prod, false},
		{"Profile in the cluster's namespace", `{"kind":"Profile","metadata":{"namespace":"team-a","name":"p"},"spec":{"clusterSelector":{"matchLabels":{"env":"prod"}}}}`, prod, true},
		{"Profile in another namespace", `{"kind":"Profile","metadata":{"namespace":"team-b","name":"p"},"spec":{"clusterSelector":{"matchLabels":{"env":"prod"}}}}`, prod, false},
		{"Profile clusterRefs default to its namespace", `{"kind":"Profile","metadata":{"namespace":"team-a","name":"p"},"spec":{"clusterRefs":[{"kind":"Cluster","name":"prod-1"}]}}`, prod, true},
		{"Profile cannot reach into another namespace by ref", `{"kind":"Profile","metadata":{"namespace":"team-b","name":"p"},"spec":{"clusterRefs":[{"kind":"Cluster","namespace":"team-a","name":"prod-1"}]}}`, prod, false},
		{"an invalid selector matches nothing, its refs still do", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterSelector":{"matchExpressions":[{"key":"env","operator":"In"}]},"clusterRefs":[{"kind":"Cluster","namespace":"team-a","name":"prod-1"}]}}`, prod, true},
		{"an invalid selector alone matches nothing", `{"kind":"ClusterProfile","metadata":{"name":"p"},"spec":{"clusterSelector":{"matchExpressions":[{"key":"env","operator":"In"}]}}}`, prod, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Matches(profile(t, tt.profile), tt.cluster); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

const (
	helmProfile      = `{"kind":"ClusterProfile","metadata":{"name":"observability"},"spec":{"clusterSelector":{"matchLabels":{"env":"prod"}},"helmCharts":[{"chartName":"x"}]}}`
	helmAndResources = `{"kind":"ClusterProfile","metadata":{"name":"observability"},"spec":{"clusterSelector":{"matchLabels":{"env":"prod"}},"helmCharts":[{"chartName":"x"}],"policyRefs":[{"kind":"ConfigMap","name":"y"}]}}`
)

func TestProfileStates(t *testing.T) {
	cluster := capi("team-a", "prod-1", map[string]string{"env": "prod"})
	sum := func(features ...v1alpha1.FeatureStatus) Summary {
		return summary("team-a", "observability-capi-prod-1", "prod-1", v1alpha1.ClusterTypeCapi, KindClusterProfile, "observability", features...)
	}
	tests := []struct {
		name      string
		profile   string
		summaries []Summary
		want      v1alpha1.ProfileReadiness
	}{
		{
			name: "no summary yet: Pending", profile: helmProfile,
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", State: v1alpha1.ProfilePending, Message: "no ClusterSummary yet"},
		},
		{
			name: "a summary being deleted is ignored", profile: helmProfile,
			summaries: []Summary{func() Summary { s := sum(feature("Helm", "Provisioned", "")); s.Deleting = true; return s }()},
			want:      v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", State: v1alpha1.ProfilePending, Message: "no ClusterSummary yet"},
		},
		{
			// Sveltos's own Addons liveness check passes this summary; Periscope does not.
			name: "a summary that reports no feature yet is Provisioning, not Deployed", profile: helmProfile,
			summaries: []Summary{sum()},
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", ClusterSummary: "observability-capi-prod-1",
				State: v1alpha1.ProfileProvisioning, Message: "Helm: no status yet"},
		},
		{
			name: "every wanted feature Provisioned: Deployed", profile: helmProfile,
			summaries: []Summary{sum(feature("Helm", "Provisioned", ""))},
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", ClusterSummary: "observability-capi-prod-1",
				State: v1alpha1.ProfileDeployed, Features: []v1alpha1.FeatureStatus{feature("Helm", "Provisioned", "")}},
		},
		{
			name: "a wanted feature not reported yet: Provisioning", profile: helmAndResources,
			summaries: []Summary{sum(feature("Helm", "Provisioned", ""))},
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", ClusterSummary: "observability-capi-prod-1",
				State: v1alpha1.ProfileProvisioning, Message: "Resources: no status yet", Features: []v1alpha1.FeatureStatus{feature("Helm", "Provisioned", "")}},
		},
		{
			name: "Provisioning and Removing features: Provisioning", profile: helmAndResources,
			summaries: []Summary{sum(feature("Resources", "Removing", ""), feature("Helm", "Provisioning", ""))},
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", ClusterSummary: "observability-capi-prod-1",
				State: v1alpha1.ProfileProvisioning, Message: "Helm: Provisioning; Resources: Removing",
				Features: []v1alpha1.FeatureStatus{feature("Helm", "Provisioning", ""), feature("Resources", "Removing", "")}},
		},
		{
			name: "a Failed feature: Failed with its message", profile: helmAndResources,
			summaries: []Summary{sum(feature("Helm", "Failed", "timed out"), feature("Resources", "Provisioned", ""))},
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", ClusterSummary: "observability-capi-prod-1",
				State: v1alpha1.ProfileFailed, Message: "Helm: timed out",
				Features: []v1alpha1.FeatureStatus{feature("Helm", "Failed", "timed out"), feature("Resources", "Provisioned", "")}},
		},
		{
			name: "FailedNonRetriable without a message", profile: helmProfile,
			summaries: []Summary{sum(feature("Helm", "FailedNonRetriable", ""))},
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", ClusterSummary: "observability-capi-prod-1",
				State: v1alpha1.ProfileFailed, Message: "Helm: FailedNonRetriable", Features: []v1alpha1.FeatureStatus{feature("Helm", "FailedNonRetriable", "")}},
		},
		{
			name: "a helm conflict fails an otherwise provisioned profile", profile: helmProfile,
			summaries: []Summary{func() Summary {
				s := sum(feature("Helm", "Provisioned", ""))
				s.HelmReleases = []HelmRelease{{Namespace: "monitoring", Name: "prom", Conflict: true, ConflictMessage: "managed by another profile"}}
				return s
			}()},
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", ClusterSummary: "observability-capi-prod-1",
				State: v1alpha1.ProfileFailed, Message: "helm release monitoring/prom: conflict: managed by another profile",
				Features: []v1alpha1.FeatureStatus{feature("Helm", "Provisioned", "")}},
		},
		{
			name: "a summary failureMessage fails it", profile: helmProfile,
			summaries: []Summary{func() Summary {
				s := sum(feature("Helm", "Provisioned", ""))
				s.FailureMessage = "cluster unreachable"
				return s
			}()},
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", ClusterSummary: "observability-capi-prod-1",
				State: v1alpha1.ProfileFailed, Message: "cluster unreachable", Features: []v1alpha1.FeatureStatus{feature("Helm", "Provisioned", "")}},
		},
		{
			name: "summaries of another cluster type or profile do not count", profile: helmProfile,
			summaries: []Summary{
				summary("team-a", "x", "prod-1", v1alpha1.ClusterTypeSveltos, KindClusterProfile, "observability", feature("Helm", "Provisioned", "")),
				summary("team-a", "y", "prod-1", v1alpha1.ClusterTypeCapi, KindProfile, "observability", feature("Helm", "Provisioned", "")),
				summary("team-a", "z", "prod-1", v1alpha1.ClusterTypeCapi, KindClusterProfile, "other", feature("Helm", "Provisioned", "")),
			},
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", State: v1alpha1.ProfilePending, Message: "no ClusterSummary yet"},
		},
		{
			name: "an invalid summary fails the profile", profile: helmProfile,
			summaries: []Summary{func() Summary {
				s := sum()
				s.Invalid = "status.featureSummaries[0].status: unknown status \"Exploded\""
				return s
			}()},
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", ClusterSummary: "observability-capi-prod-1",
				State: v1alpha1.ProfileFailed, Message: `ClusterSummary observability-capi-prod-1 is invalid: status.featureSummaries[0].status: unknown status "Exploded"`},
		},
		{
			name:    "an invalid profile fails where it matches",
			profile: `{"kind":"ClusterProfile","metadata":{"name":"observability"},"spec":{"clusterSelector":{"matchLabels":{"env":"prod"}},"helmCharts":"not-a-list"}}`,
			want: v1alpha1.ProfileReadiness{Kind: "ClusterProfile", Name: "observability", State: v1alpha1.ProfileFailed,
				Message: "ClusterProfile observability is invalid: spec.helmCharts: expected a list, got a string"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(Input{Cluster: cluster, Profiles: []Profile{profile(t, tt.profile)}, Summaries: tt.summaries})
			if len(got.Status.Profiles) != 1 {
				t.Fatalf("got %d profiles, want 1", len(got.Status.Profiles))
			}
			if diff := cmp.Diff(tt.want, got.Status.Profiles[0], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
		})
	}
}

func cond(t, status, reason, message string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: message}
}

func TestConditions(t *testing.T) {
	prod := map[string]string{"env": "prod"}
	deployed := func(name string) Summary {
		return summary("team-a", name+"-s", "prod-1", v1alpha1.ClusterTypeCapi, KindClusterProfile, name, feature("Helm", "Provisioned", ""))
	}
	helm := func(name string) Profile {
		return Profile{Kind: KindClusterProfile, Name: name, Selector: mustSelector(t, "env=prod"), Features: []string{FeatureHelm}}
	}
	down := capi("team-a", "prod-1", prod)
	down.Availability = Availability{Reason: ReasonNotAvailable, Message: "Available is False"}

	tests := []struct {
		name       string
		in         Input
		wantReady  bool
		wantAddons v1alpha1.AddonCounts
		want       []metav1.Condition
	}{
		{
			name:      "no add-ons, available: Ready",
			in:        Input{Cluster: capi("team-a", "prod-1", prod)},
			wantReady: true,
			want: []metav1.Condition{
				cond("ClusterAvailable", "True", "Available", "up"),
				cond("AddonsDeployed", "True", "NoAddons", "no ClusterProfile or Profile matches the cluster"),
				cond("ChecksPassed", "True", "NoChecks", "no readiness extension applies to the cluster"),
				cond("Ready", "True", "Ready", "the cluster is available, every add-on is deployed and every check passed"),
			},
		},
		{
			name:       "every add-on deployed",
			in:         Input{Cluster: capi("team-a", "prod-1", prod), Profiles: []Profile{helm("a"), helm("b")}, Summaries: []Summary{deployed("a"), deployed("b")}},
			wantReady:  true,
			wantAddons: v1alpha1.AddonCounts{Total: 2, Deployed: 2},
			want: []metav1.Condition{
				cond("ClusterAvailable", "True", "Available", "up"),
				cond("AddonsDeployed", "True", "AllDeployed", "all 2 add-on profiles deployed"),
				cond("ChecksPassed", "True", "NoChecks", "no readiness extension applies to the cluster"),
				cond("Ready", "True", "Ready", "the cluster is available, every add-on is deployed and every check passed"),
			},
		},
		{
			name: "failed, provisioning and pending add-ons: the failure gives the reason",
			in: Input{Cluster: capi("team-a", "prod-1", prod), Profiles: []Profile{helm("a"), helm("b"), helm("c"), helm("d")},
				Summaries: []Summary{
					deployed("a"),
					summary("team-a", "b-s", "prod-1", v1alpha1.ClusterTypeCapi, KindClusterProfile, "b", feature("Helm", "Failed", "timed out")),
					summary("team-a", "c-s", "prod-1", v1alpha1.ClusterTypeCapi, KindClusterProfile, "c", feature("Helm", "Provisioning", "")),
				}},
			wantAddons: v1alpha1.AddonCounts{Total: 4, Deployed: 1, Failed: 1, Provisioning: 1, Pending: 1},
			want: []metav1.Condition{
				cond("ClusterAvailable", "True", "Available", "up"),
				cond("AddonsDeployed", "False", "AddonsFailed", "1 of 4 profiles failed: b (Helm: timed out); 1 provisioning: c (Helm: Provisioning); 1 pending: d (no ClusterSummary yet)"),
				cond("ChecksPassed", "True", "NoChecks", "no readiness extension applies to the cluster"),
				cond("Ready", "False", "AddonsFailed", "1 of 4 profiles failed: b (Helm: timed out); 1 provisioning: c (Helm: Provisioning); 1 pending: d (no ClusterSummary yet)"),
			},
		},
		{
			name:       "an unavailable cluster gives the Ready reason before add-ons",
			in:         Input{Cluster: down, Profiles: []Profile{helm("a")}},
			wantAddons: v1alpha1.AddonCounts{Total: 1, Pending: 1},
			want: []metav1.Condition{
				cond("ClusterAvailable", "False", "NotAvailable", "Available is False"),
				cond("AddonsDeployed", "False", "AddonsPending", "1 of 1 profiles pending: a (no ClusterSummary yet)"),
				cond("ChecksPassed", "True", "NoChecks", "no readiness extension applies to the cluster"),
				cond("Ready", "False", "NotAvailable", "Available is False"),
			},
		},
		{
			name: "an invalid summary makes AddonsDeployed InvalidSource",
			in: Input{Cluster: capi("team-a", "prod-1", prod), Profiles: []Profile{helm("a")},
				Summaries: []Summary{func() Summary { s := deployed("a"); s.Invalid = "bad"; return s }()}},
			wantAddons: v1alpha1.AddonCounts{Total: 1, Failed: 1},
			want: []metav1.Condition{
				cond("ClusterAvailable", "True", "Available", "up"),
				cond("AddonsDeployed", "False", "InvalidSource", "1 of 1 profiles failed: a (ClusterSummary a-s is invalid: bad)"),
				cond("ChecksPassed", "True", "NoChecks", "no readiness extension applies to the cluster"),
				cond("Ready", "False", "InvalidSource", "1 of 1 profiles failed: a (ClusterSummary a-s is invalid: bad)"),
			},
		},
		{
			name:      "every check passed",
			in:        Input{Cluster: capi("team-a", "prod-1", prod), Checks: []v1alpha1.CheckResult{check("ok", true, "Passed"), check("scan", true, "FailureIgnored")}},
			wantReady: true,
			want: []metav1.Condition{
				cond("ClusterAvailable", "True", "Available", "up"),
				cond("AddonsDeployed", "True", "NoAddons", "no ClusterProfile or Profile matches the cluster"),
				cond("ChecksPassed", "True", "ChecksPassed", "2 checks passed"),
				cond("Ready", "True", "Ready", "the cluster is available, every add-on is deployed and every check passed"),
			},
		},
		{
			name: "a check waiting for its first answer keeps Ready Unknown",
			in:   Input{Cluster: capi("team-a", "prod-1", prod), Checks: []v1alpha1.CheckResult{check("ok", true, "Passed"), check("slow", false, CheckReasonPending)}},
			want: []metav1.Condition{
				cond("ClusterAvailable", "True", "Available", "up"),
				cond("AddonsDeployed", "True", "NoAddons", "no ClusterProfile or Profile matches the cluster"),
				cond("ChecksPassed", "Unknown", "ChecksPending", "waiting for the first answer of approvals/slow"),
				cond("Ready", "Unknown", "ChecksPending", "waiting for the first answer of approvals/slow"),
			},
		},
		{
			name: "a failed check wins over a pending one",
			in:   Input{Cluster: capi("team-a", "prod-1", prod), Checks: []v1alpha1.CheckResult{check("no", false, "NotReady"), check("slow", false, CheckReasonPending)}},
			want: []metav1.Condition{
				cond("ClusterAvailable", "True", "Available", "up"),
				cond("AddonsDeployed", "True", "NoAddons", "no ClusterProfile or Profile matches the cluster"),
				cond("ChecksPassed", "False", "ChecksFailed", "1 of 2 checks not ready: approvals/no (no says NotReady)"),
				cond("Ready", "False", "ChecksFailed", "1 of 2 checks not ready: approvals/no (no says NotReady)"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.in).Status
			if diff := cmp.Diff(tt.want, got.Conditions, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if got.Ready != tt.wantReady {
				t.Errorf("ready = %v, want %v", got.Ready, tt.wantReady)
			}
			if diff := cmp.Diff(tt.wantAddons, got.Addons); diff != "" {
				t.Errorf("addons (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTransitionTimesAreDeterministic(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	written := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	c := capi("team-a", "prod-1", nil)
	c.Created, c.LastWrite = metav1.NewTime(created), written
	first := Compute(Input{Cluster: c}).Status.Conditions
	for _, cd := range first {
		if !cd.LastTransitionTime.Time.Equal(written) {
			t.Errorf("%s: first transition at %v, want the latest source write %v", cd.Type, cd.LastTransitionTime, written)
		}
	}
	previous := []metav1.Condition{{Type: "Ready", Status: "True", LastTransitionTime: earlier}, {Type: "ClusterAvailable", Status: "False", LastTransitionTime: earlier}}
	again := Compute(Input{Cluster: c, Previous: previous}).Status.Conditions
	got := map[string]time.Time{}
	for _, cd := range again {
		got[cd.Type] = cd.LastTransitionTime.Time
	}
	if !got["Ready"].Equal(earlier.Time) {
		t.Errorf("Ready kept its status, its time moved to %v", got["Ready"])
	}
	if !got["ClusterAvailable"].Equal(written) {
		t.Errorf("ClusterAvailable changed status, its time is %v, want %v", got["ClusterAvailable"], written)
	}
}

func mustSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func check(handler string, ready bool, reason string) v1alpha1.CheckResult {
	return v1alpha1.CheckResult{Extension: "approvals", Handler: handler, Ready: ready, Reason: reason, Message: handler + " says " + reason}
}

func TestWithChecksMovesTransitionToTheProbeTime(t *testing.T) {
	in := Input{Cluster: capi("team-a", "prod-1", map[string]string{"env": "prod"})}
	base := ComputeBase(in)
	pending := base.WithChecks([]v1alpha1.CheckResult{check("a", false, CheckReasonPending)}, nil)
	probe := metav1.NewTime(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	answered := check("a", true, "Passed")
	answered.LastProbeTime = probe
	done := base.WithChecks([]v1alpha1.CheckResult{answered}, pending.Status.Conditions)
	for _, c := range done.Status.Conditions {
		if (c.Type == ConditionChecksPassed || c.Type == ConditionReady) && !c.LastTransitionTime.Equal(&probe) {
			t.Errorf("%s moved at %v, want the probe time %v", c.Type, c.LastTransitionTime, probe)
		}
	}
	if !done.Status.Ready || pending.Status.Ready {
		t.Errorf("ready: pending %v, answered %v", pending.Status.Ready, done.Status.Ready)
	}
	if len(base.Status.Conditions) != 2 {
		t.Errorf("WithChecks changed the base result: %d conditions", len(base.Status.Conditions))
	}
}
