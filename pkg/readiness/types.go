// Package readiness computes ClusterReadiness: whether a managed cluster is available and
// whether every add-on that its matching Sveltos profiles deploy is deployed. It is pure: its
// inputs are plain values extracted from source objects (extract.go) and nothing here talks to
// an API server.
package readiness

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
)

// Sveltos labels on ClusterSummaries.
const (
	LabelClusterName        = "projectsveltos.io/cluster-name"
	LabelClusterType        = "projectsveltos.io/cluster-type"
	LabelClusterProfileName = "projectsveltos.io/cluster-profile-name"
	LabelProfileName        = "projectsveltos.io/profile-name"
)

// Profile kinds.
const (
	KindClusterProfile = "ClusterProfile"
	KindProfile        = "Profile"
)

// Feature IDs of Sveltos.
const (
	FeatureResources = "Resources"
	FeatureHelm      = "Helm"
	FeatureKustomize = "Kustomize"
)

// Availability is whether a cluster is available, and why not.
type Availability struct {
	Available bool
	Reason    string
	Message   string
}

// Cluster is what the computation needs of a Cluster API Cluster or a SveltosCluster.
type Cluster struct {
	Type         v1alpha1.ClusterType
	APIVersion   string
	Kind         string
	Namespace    string
	Name         string
	UID          types.UID
	Created      metav1.Time
	Labels       map[string]string
	Availability Availability
	LastWrite    time.Time
}

// Key returns namespace/name.
func (c Cluster) Key() string { return c.Namespace + "/" + c.Name }

// ClusterRef is one entry of a profile's spec.clusterRefs.
type ClusterRef struct {
	Kind      string
	Namespace string
	Name      string
}

// Profile is what the computation needs of a ClusterProfile or Profile.
type Profile struct {
	Kind      string
	Namespace string // empty for a ClusterProfile
	Name      string
	// Selector is nil when the profile selects no cluster by labels: no selector, an empty
	// one, or one that cannot be parsed (Sveltos matches nothing with it either).
	Selector    labels.Selector
	ClusterRefs []ClusterRef
	DryRun      bool
	// Features are the features the profile asks for: Helm (helmCharts), Resources
	// (policyRefs), Kustomize (kustomizationRefs).
	Features  []string
	LastWrite time.Time
	// Invalid says why the profile could not be read; it then fails on the clusters it matches.
	Invalid string
}

// Key identifies the profile: kind/namespace/name.
func (p Profile) Key() string { return p.Kind + "/" + p.Namespace + "/" + p.Name }

// HelmRelease is one helm release summary of a ClusterSummary.
type HelmRelease struct {
	Namespace       string
	Name            string
	Conflict        bool
	ConflictMessage string
}

// Summary is what the computation needs of a ClusterSummary.
type Summary struct {
	Namespace      string
	Name           string
	ClusterName    string
	ClusterType    v1alpha1.ClusterType
	ProfileKind    string
	ProfileName    string
	Deleting       bool
	Features       []v1alpha1.FeatureStatus
	HelmReleases   []HelmRelease
	FailureMessage string
	LastWrite      time.Time
	// Invalid says why the summary could not be read.
	Invalid string
}

// Input is everything one cluster's readiness is computed from.
type Input struct {
	Cluster Cluster
	// Profiles may hold every profile; only those that match the cluster count.
	Profiles []Profile
	// Summaries may hold every summary of the cluster's namespace; only the cluster's count.
	Summaries []Summary
	// Checks are the results of readiness extensions (none until extensions exist).
	Checks []v1alpha1.CheckResult
	// Previous holds the conditions computed before, for lastTransitionTime.
	Previous []metav1.Condition
}
