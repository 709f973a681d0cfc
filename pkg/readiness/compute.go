package readiness

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/conditions"
)

// Condition types and reasons of a ClusterReadiness.
const (
	ConditionClusterAvailable = "ClusterAvailable"
	ConditionAddonsDeployed   = "AddonsDeployed"
	ConditionChecksPassed     = "ChecksPassed"
	ConditionReady            = "Ready"

	ReasonAvailable          = "Available"
	ReasonDeleting           = "Deleting"
	ReasonInvalidSource      = "InvalidSource"
	ReasonNoAddons           = "NoAddons"
	ReasonAllDeployed        = "AllDeployed"
	ReasonAddonsFailed       = "AddonsFailed"
	ReasonAddonsProvisioning = "AddonsProvisioning"
	ReasonAddonsPending      = "AddonsPending"
	ReasonNoChecks           = "NoChecks"
	ReasonChecksPassed       = "ChecksPassed"
	ReasonChecksFailed       = "ChecksFailed"
	ReasonChecksPending      = "ChecksPending"
	// CheckReasonPending is the reason of a check that has not been answered yet.
	CheckReasonPending = "Pending"
	ReasonReady        = "Ready"
)

// Result is a computed status and the profiles that matched, which the controller indexes so
// that a profile change recomputes the clusters it matched before.
type Result struct {
	Status  v1alpha1.ClusterReadinessStatus
	Matched []string // profile keys
	// observed is the newest write time among the sources, for lastTransitionTime.
	observed time.Time
}

// Compute returns the readiness of in.Cluster. The result depends on in alone.
func Compute(in Input) Result {
	return ComputeBase(in).WithChecks(in.Checks, in.Previous)
}

// ComputeBase computes everything but the extensions' checks: the status has the
// ClusterAvailable and AddonsDeployed conditions, which the checks are asked with. WithChecks
// completes it. in.Checks is ignored.
func ComputeBase(in Input) Result {
	c := in.Cluster
	status := v1alpha1.ClusterReadinessStatus{
		ClusterRef:  v1alpha1.ClusterReference{APIVersion: c.APIVersion, Kind: c.Kind, Name: c.Name},
		ClusterType: c.Type,
	}
	times := []time.Time{c.LastWrite}
	var matched []string
	invalid := 0
	for _, p := range in.Profiles {
		if !Matches(p, c) {
			continue
		}
		matched = append(matched, p.Key())
		times = append(times, p.LastWrite)
		pr, summary := profileReadiness(p, c, in.Summaries)
		if summary != nil {
			times = append(times, summary.LastWrite)
		}
		if (summary != nil && summary.Invalid != "") || p.Invalid != "" {
			invalid++
		}
		status.Profiles = append(status.Profiles, pr)
		count(&status.Addons, pr.State)
	}
	sort.Slice(status.Profiles, func(i, j int) bool {
		if status.Profiles[i].Kind != status.Profiles[j].Kind {
			return status.Profiles[i].Kind < status.Profiles[j].Kind
		}
		return status.Profiles[i].Name < status.Profiles[j].Name
	})
	sort.Strings(matched)

	observed := conditions.Latest(c.Created.Time, times...)
	status.Conditions = []metav1.Condition{
		conditions.WithTransition(availableCondition(c.Availability), in.Previous, observed),
		conditions.WithTransition(addonsCondition(status.Profiles, invalid), in.Previous, observed),
	}
	return Result{Status: status, Matched: matched, observed: observed}
}

// WithChecks adds the extensions' checks to a result of ComputeBase: status.checks, the
// ChecksPassed condition and Ready. A check's lastProbeTime counts as a source write time.
func (r Result) WithChecks(checks []v1alpha1.CheckResult, previous []metav1.Condition) Result {
	status := r.Status.DeepCopy()
	status.Checks = checks
	observed := r.observed
	for _, c := range checks {
		if c.LastProbeTime.After(observed) {
			observed = c.LastProbeTime.Time
		}
	}
	base := status.Conditions[:2:2]
	checksCond := checksCondition(checks)
	ready := readyCondition(base[0], base[1], checksCond)
	status.Conditions = append(base,
		conditions.WithTransition(checksCond, previous, observed),
		conditions.WithTransition(ready, previous, observed))
	status.Ready = ready.Status == metav1.ConditionTrue
	return Result{Status: *status, Matched: r.Matched, observed: observed}
}

// profileReadiness finds the profile's summary for the cluster and derives the profile's state.
func profileReadiness(p Profile, c Cluster, summaries []Summary) (v1alpha1.ProfileReadiness, *Summary) {
	pr := v1alpha1.ProfileReadiness{Kind: p.Kind, Name: p.Name}
	if p.Invalid != "" {
		pr.State = v1alpha1.ProfileFailed
		pr.Message = fmt.Sprintf("%s %s is invalid: %s", p.Kind, p.Name, p.Invalid)
		return pr, nil
	}
	s := summaryFor(p, c, summaries)
	if s == nil {
		pr.State = v1alpha1.ProfilePending
		pr.Message = "no ClusterSummary yet"
		return pr, nil
	}
	pr.ClusterSummary = s.Name
	if s.Invalid != "" {
		pr.State = v1alpha1.ProfileFailed
		pr.Message = fmt.Sprintf("ClusterSummary %s is invalid: %s", s.Name, s.Invalid)
		return pr, s
	}
	pr.Features = append([]v1alpha1.FeatureStatus(nil), s.Features...)
	sort.Slice(pr.Features, func(i, j int) bool { return pr.Features[i].FeatureID < pr.Features[j].FeatureID })

	var failures, waiting []string
	if s.FailureMessage != "" {
		failures = append(failures, s.FailureMessage)
	}
	reported := map[string]bool{}
	for _, f := range pr.Features {
		reported[f.FeatureID] = true
		switch f.Status {
		case "Provisioned":
		case "Failed", "FailedNonRetriable":
			msg := f.FailureMessage
			if msg == "" {
				msg = f.Status
			}
			failures = append(failures, fmt.Sprintf("%s: %s", f.FeatureID, msg))
		default:
			waiting = append(waiting, fmt.Sprintf("%s: %s", f.FeatureID, statusOrNone(f.Status)))
		}
	}
	for _, h := range s.HelmReleases {
		if h.Conflict {
			failures = append(failures, fmt.Sprintf("helm release %s/%s: conflict: %s", h.Namespace, h.Name, h.ConflictMessage))
		}
	}
	for _, want := range p.Features {
		if !reported[want] {
			waiting = append(waiting, fmt.Sprintf("%s: no status yet", want))
		}
	}
	switch {
	case len(failures) > 0:
		pr.State = v1alpha1.ProfileFailed
		pr.Message = strings.Join(failures, "; ")
	case len(waiting) > 0:
		pr.State = v1alpha1.ProfileProvisioning
		pr.Message = strings.Join(waiting, "; ")
	default:
		pr.State = v1alpha1.ProfileDeployed
	}
	return pr, s
}

func statusOrNone(s string) string {
	if s == "" {
		return "no status yet"
	}
	return s
}

// summaryFor returns the ClusterSummary Sveltos keeps for profile p and cluster c: in the
// cluster's namespace, labelled with the cluster's name and type and the profile's name, and
// not being deleted. Should there be several, the first by name.
func summaryFor(p Profile, c Cluster, summaries []Summary) *Summary {
	var found *Summary
	for i := range summaries {
		s := &summaries[i]
		if s.Deleting || s.Namespace != c.Namespace || s.ClusterName != c.Name || s.ClusterType != c.Type ||
			s.ProfileKind != p.Kind || s.ProfileName != p.Name {
			continue
		}
		if found == nil || s.Name < found.Name {
			found = s
		}
	}
	return found
}

func count(a *v1alpha1.AddonCounts, s v1alpha1.ProfileState) {
	a.Total++
	switch s {
	case v1alpha1.ProfileDeployed:
		a.Deployed++
	case v1alpha1.ProfileProvisioning:
		a.Provisioning++
	case v1alpha1.ProfileFailed:
		a.Failed++
	default:
		a.Pending++
	}
}

func availableCondition(a Availability) metav1.Condition {
	if a.Available {
		return metav1.Condition{Type: ConditionClusterAvailable, Status: metav1.ConditionTrue, Reason: ReasonAvailable, Message: a.Message}
	}
	return metav1.Condition{Type: ConditionClusterAvailable, Status: metav1.ConditionFalse, Reason: a.Reason, Message: a.Message}
}

func addonsCondition(profiles []v1alpha1.ProfileReadiness, invalid int) metav1.Condition {
	cond := metav1.Condition{Type: ConditionAddonsDeployed}
	if len(profiles) == 0 {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonNoAddons, "no ClusterProfile or Profile matches the cluster"
		return cond
	}
	byState := map[v1alpha1.ProfileState][]string{}
	for _, p := range profiles {
		if p.State == v1alpha1.ProfileDeployed {
			continue
		}
		entry := p.Name
		if p.Message != "" {
			entry = fmt.Sprintf("%s (%s)", p.Name, p.Message)
		}
		byState[p.State] = append(byState[p.State], entry)
	}
	if len(byState) == 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonAllDeployed
		if len(profiles) == 1 {
			cond.Message = "the 1 add-on profile is deployed"
		} else {
			cond.Message = fmt.Sprintf("all %d add-on profiles deployed", len(profiles))
		}
		return cond
	}
	cond.Status = metav1.ConditionFalse
	var parts []string
	for _, s := range []struct {
		state  v1alpha1.ProfileState
		reason string
		verb   string
	}{
		{v1alpha1.ProfileFailed, ReasonAddonsFailed, "failed"},
		{v1alpha1.ProfileProvisioning, ReasonAddonsProvisioning, "provisioning"},
		{v1alpha1.ProfilePending, ReasonAddonsPending, "pending"},
	} {
		names := byState[s.state]
		if len(names) == 0 {
			continue
		}
		if cond.Reason == "" {
			cond.Reason = s.reason
			parts = append(parts, fmt.Sprintf("%d of %d profiles %s: %s", len(names), len(profiles), s.verb, strings.Join(names, ", ")))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s: %s", len(names), s.verb, strings.Join(names, ", ")))
	}
	if invalid > 0 {
		cond.Reason = ReasonInvalidSource
	}
	cond.Message = strings.Join(parts, "; ")
	return cond
}

// checksCondition is False when a check is not ready, else Unknown while a check waits for its
// first answer (so that Ready is not True early), else True.
func checksCondition(checks []v1alpha1.CheckResult) metav1.Condition {
	cond := metav1.Condition{Type: ConditionChecksPassed, Status: metav1.ConditionTrue}
	if len(checks) == 0 {
		cond.Reason, cond.Message = ReasonNoChecks, "no readiness extension applies to the cluster"
		return cond
	}
	var failing, pending []string
	for _, c := range checks {
		switch {
		case c.Reason == CheckReasonPending:
			pending = append(pending, c.Extension+"/"+c.Handler)
		case !c.Ready:
			failing = append(failing, fmt.Sprintf("%s/%s (%s)", c.Extension, c.Handler, c.Message))
		}
	}
	switch {
	case len(failing) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonChecksFailed
		cond.Message = fmt.Sprintf("%d of %d checks not ready: %s", len(failing), len(checks), strings.Join(failing, ", "))
	case len(pending) > 0:
		cond.Status, cond.Reason = metav1.ConditionUnknown, ReasonChecksPending
		cond.Message = fmt.Sprintf("waiting for the first answer of %s", strings.Join(pending, ", "))
	case len(checks) == 1:
		cond.Reason, cond.Message = ReasonChecksPassed, "the 1 check passed"
	default:
		cond.Reason, cond.Message = ReasonChecksPassed, fmt.Sprintf("%d checks passed", len(checks))
	}
	return cond
}

// readyCondition is True only when the three others are; otherwise it takes the reason and
// message of the first that is not.
func readyCondition(parts ...metav1.Condition) metav1.Condition {
	for _, p := range parts {
		if p.Status != metav1.ConditionTrue {
			return metav1.Condition{Type: ConditionReady, Status: p.Status, Reason: p.Reason, Message: p.Message}
		}
	}
	return metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonReady, Message: "the cluster is available, every add-on is deployed and every check passed"}
}
