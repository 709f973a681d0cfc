package readiness

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/sources/accessors"
)

// Reasons of ClusterAvailable when the cluster is not available.
const (
	ReasonControlPlaneNotInitialized = "ControlPlaneNotInitialized"
	ReasonControlPlaneNotReady       = "ControlPlaneNotReady"
	ReasonInfrastructureNotReady     = "InfrastructureNotReady"
	ReasonNotAvailable               = "NotAvailable"
	ReasonNotReady                   = "NotReady"
	ReasonConnectionDown             = "ConnectionDown"
)

func clusterBase(u *unstructured.Unstructured, t v1alpha1.ClusterType) Cluster {
	return Cluster{
		Type: t, APIVersion: u.GetAPIVersion(), Kind: u.GetKind(),
		Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID(),
		Created: u.GetCreationTimestamp(), Labels: u.GetLabels(), LastWrite: accessors.LastWrite(u),
	}
}

// ClusterIdentity returns what profile matching reads of a cluster object (type, namespace,
// name, labels), without the cost of extracting its availability and write time.
func ClusterIdentity(u *unstructured.Unstructured, t v1alpha1.ClusterType) Cluster {
	return Cluster{Type: t, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), Labels: u.GetLabels()}
}

// ClusterFromCAPI reads a Cluster API Cluster in the shape of the version it was read in:
// v1beta1 (status.infrastructureReady, status.controlPlaneReady, condition Ready) or v1beta2
// and later (status.initialization.controlPlaneInitialized, condition Available). A field of
// the wrong type makes the cluster unavailable with reason InvalidSource.
func ClusterFromCAPI(u *unstructured.Unstructured) Cluster {
	c := clusterBase(u, v1alpha1.ClusterTypeCapi)
	c.Availability = capiAvailability(u)
	return c
}

func capiAvailability(u *unstructured.Unstructured) Availability {
	if u.GetDeletionTimestamp() != nil {
		return Availability{Reason: ReasonDeleting, Message: "the Cluster is being deleted"}
	}
	invalid := func(err error) Availability {
		return Availability{Reason: ReasonInvalidSource, Message: fmt.Sprintf("Cluster %s: %v", u.GetName(), err)}
	}
	if strings.HasSuffix(u.GetAPIVersion(), "/v1beta1") {
		infra, _, err := accessors.Bool(u.Object, "status", "infrastructureReady")
		if err != nil {
			return invalid(err)
		}
		cp, _, err := accessors.Bool(u.Object, "status", "controlPlaneReady")
		if err != nil {
			return invalid(err)
		}
		ready, found, err := accessors.FindCondition(u.Object, "Ready")
		if err != nil {
			return invalid(err)
		}
		switch {
		case !infra:
			return Availability{Reason: ReasonInfrastructureNotReady, Message: "the cluster's infrastructure is not ready"}
		case !cp:
			return Availability{Reason: ReasonControlPlaneNotReady, Message: "the cluster's control plane is not ready"}
		case found && ready.Status != "True":
			return Availability{Reason: ReasonNotReady, Message: conditionMessage("Ready", ready)}
		}
		return Availability{Available: true, Message: "infrastructure and control plane are ready"}
	}
	initialized, _, err := accessors.Bool(u.Object, "status", "initialization", "controlPlaneInitialized")
	if err != nil {
		return invalid(err)
	}
	available, found, err := accessors.FindCondition(u.Object, "Available")
	if err != nil {
		return invalid(err)
	}
	switch {
	case !initialized:
		return Availability{Reason: ReasonControlPlaneNotInitialized, Message: "the cluster's control plane is not initialized"}
	case !found:
		return Availability{Reason: ReasonNotAvailable, Message: "the Cluster reports no Available condition yet"}
	case available.Status != "True":
		return Availability{Reason: ReasonNotAvailable, Message: conditionMessage("Available", available)}
	}
	return Availability{Available: true, Message: "the Cluster's Available condition is True"}
}

func conditionMessage(condType string, c accessors.Condition) string {
	msg := fmt.Sprintf("%s is %s", condType, statusOrNone(c.Status))
	if c.Reason != "" {
		msg += " (" + c.Reason + ")"
	}
	if c.Message != "" {
		msg += ": " + c.Message
	}
	return msg
}

// ClusterFromSveltos reads a SveltosCluster: available when status.ready is true and the
// connection is not Down.
func ClusterFromSveltos(u *unstructured.Unstructured) Cluster {
	c := clusterBase(u, v1alpha1.ClusterTypeSveltos)
	c.Availability = sveltosAvailability(u)
	return c
}

func sveltosAvailability(u *unstructured.Unstructured) Availability {
	if u.GetDeletionTimestamp() != nil {
		return Availability{Reason: ReasonDeleting, Message: "the SveltosCluster is being deleted"}
	}
	invalid := func(err error) Availability {
		return Availability{Reason: ReasonInvalidSource, Message: fmt.Sprintf("SveltosCluster %s: %v", u.GetName(), err)}
	}
	ready, _, err := accessors.Bool(u.Object, "status", "ready")
	if err != nil {
		return invalid(err)
	}
	connection, _, err := accessors.String(u.Object, "status", "connectionStatus")
	if err != nil {
		return invalid(err)
	}
	failure, _, err := accessors.String(u.Object, "status", "failureMessage")
	if err != nil {
		return invalid(err)
	}
	withFailure := func(msg string) string {
		if failure != "" {
			return msg + ": " + failure
		}
		return msg
	}
	switch {
	case connection == "Down":
		return Availability{Reason: ReasonConnectionDown, Message: withFailure("Sveltos cannot reach the cluster")}
	case !ready:
		return Availability{Reason: ReasonNotReady, Message: withFailure("the SveltosCluster is not ready")}
	}
	return Availability{Available: true, Message: "the SveltosCluster is ready and connected"}
}

// ProfileFromUnstructured reads a ClusterProfile or a Profile. What cannot be read is named in
// Invalid; the rest (in particular how it matches clusters) is kept when it can be read.
func ProfileFromUnstructured(u *unstructured.Unstructured) Profile {
	p := Profile{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), LastWrite: accessors.LastWrite(u)}
	if p.Kind == KindClusterProfile {
		p.Namespace = ""
	}
	var problems []string
	if sel, found, err := accessors.Map(u.Object, "spec", "clusterSelector"); err != nil {
		problems = append(problems, err.Error())
	} else if found {
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, &ls); err != nil {
			problems = append(problems, fmt.Sprintf("spec.clusterSelector: %v", err))
		} else if len(ls.MatchLabels) > 0 || len(ls.MatchExpressions) > 0 {
			selector, err := metav1.LabelSelectorAsSelector(&ls)
			if err != nil {
				problems = append(problems, fmt.Sprintf("spec.clusterSelector: %v", err))
			} else {
				p.Selector = selector
			}
		}
	}
	refs, _, err := accessors.Slice(u.Object, "spec", "clusterRefs")
	if err != nil {
		problems = append(problems, err.Error())
	}
	for i, r := range refs {
		m, ok := r.(map[string]interface{})
		if !ok {
			problems = append(problems, fmt.Sprintf("spec.clusterRefs[%d]: expected an object", i))
			continue
		}
		var ref ClusterRef
		if refErr := accessors.Fields(m, []string{"kind", "namespace", "name"}, &ref.Kind, &ref.Namespace, &ref.Name); refErr != nil {
			problems = append(problems, fmt.Sprintf("spec.clusterRefs[%d].%v", i, refErr))
			continue
		}
		p.ClusterRefs = append(p.ClusterRefs, ref)
	}
	mode, _, err := accessors.String(u.Object, "spec", "syncMode")
	if err != nil {
		problems = append(problems, err.Error())
	}
	p.DryRun = mode == "DryRun"
	for _, f := range []struct{ field, feature string }{
		{"helmCharts", FeatureHelm}, {"kustomizationRefs", FeatureKustomize}, {"policyRefs", FeatureResources},
	} {
		list, _, err := accessors.Slice(u.Object, "spec", f.field)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if len(list) > 0 {
			p.Features = append(p.Features, f.feature)
		}
	}
	sort.Strings(p.Features)
	p.Invalid = strings.Join(problems, "; ")
	return p
}

var knownFeatureStatuses = map[string]bool{
	"": true, "Provisioning": true, "Provisioned": true, "Failed": true, "FailedNonRetriable": true,
	"Removing": true, "Removed": true, "AgentRemoving": true,
}

// SummaryFromUnstructured reads a ClusterSummary. Wrong types, unknown status strings and
// missing labels are named in Invalid.
func SummaryFromUnstructured(u *unstructured.Unstructured) Summary {
	labels := u.GetLabels()
	s := Summary{
		Namespace: u.GetNamespace(), Name: u.GetName(),
		ClusterName: labels[LabelClusterName], ClusterType: v1alpha1.ClusterType(labels[LabelClusterType]),
		Deleting: u.GetDeletionTimestamp() != nil, LastWrite: accessors.LastWrite(u),
	}
	switch {
	case labels[LabelClusterProfileName] != "":
		s.ProfileKind, s.ProfileName = KindClusterProfile, labels[LabelClusterProfileName]
	case labels[LabelProfileName] != "":
		s.ProfileKind, s.ProfileName = KindProfile, labels[LabelProfileName]
	}
	var problems []string
	if s.ClusterType != v1alpha1.ClusterTypeCapi && s.ClusterType != v1alpha1.ClusterTypeSveltos {
		problems = append(problems, fmt.Sprintf("label %s is %q, not Capi or Sveltos", LabelClusterType, s.ClusterType))
	}
	features, _, err := accessors.Slice(u.Object, "status", "featureSummaries")
	if err != nil {
		problems = append(problems, err.Error())
	}
	for i, f := range features {
		m, ok := f.(map[string]interface{})
		if !ok {
			problems = append(problems, fmt.Sprintf("status.featureSummaries[%d]: expected an object", i))
			continue
		}
		var fs v1alpha1.FeatureStatus
		fErr := accessors.Fields(m, []string{"featureID", "status", "failureMessage"}, &fs.FeatureID, &fs.Status, &fs.FailureMessage)
		switch {
		case fErr != nil:
			problems = append(problems, fmt.Sprintf("status.featureSummaries[%d].%v", i, fErr))
		case !knownFeatureStatuses[fs.Status]:
			problems = append(problems, fmt.Sprintf("status.featureSummaries[%d].status: unknown status %q", i, fs.Status))
		default:
			s.Features = append(s.Features, fs)
		}
	}
	releases, _, err := accessors.Slice(u.Object, "status", "helmReleaseSummaries")
	if err != nil {
		problems = append(problems, err.Error())
	}
	for i, r := range releases {
		m, ok := r.(map[string]interface{})
		if !ok {
			problems = append(problems, fmt.Sprintf("status.helmReleaseSummaries[%d]: expected an object", i))
			continue
		}
		var h HelmRelease
		var status string
		hErr := accessors.Fields(m, []string{"releaseNamespace", "releaseName", "status", "conflictMessage"}, &h.Namespace, &h.Name, &status, &h.ConflictMessage)
		switch {
		case hErr != nil:
			problems = append(problems, fmt.Sprintf("status.helmReleaseSummaries[%d].%v", i, hErr))
		case status != "" && status != "Managing" && status != "Conflict":
			problems = append(problems, fmt.Sprintf("status.helmReleaseSummaries[%d].status: unknown status %q", i, status))
		default:
			h.Conflict = status == "Conflict"
			s.HelmReleases = append(s.HelmReleases, h)
		}
	}
	if s.FailureMessage, _, err = accessors.String(u.Object, "status", "failureMessage"); err != nil {
		problems = append(problems, err.Error())
	}
	s.Invalid = strings.Join(problems, "; ")
	return s
}
