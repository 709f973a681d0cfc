package readiness

import (
	"k8s.io/apimachinery/pkg/labels"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
)

// Matches reports whether profile p deploys to cluster c: a ClusterProfile when its
// clusterSelector matches the cluster's labels or its clusterRefs name the cluster; a Profile
// the same, for clusters in its own namespace only. DryRun profiles deploy nothing.
func Matches(p Profile, c Cluster) bool {
	if p.DryRun {
		return false
	}
	if p.Kind == KindProfile && p.Namespace != c.Namespace {
		return false
	}
	if p.Selector != nil && p.Selector.Matches(labels.Set(c.Labels)) {
		return true
	}
	for _, ref := range p.ClusterRefs {
		namespace := ref.Namespace
		if p.Kind == KindProfile && namespace == "" {
			namespace = p.Namespace
		}
		if ref.Name == c.Name && namespace == c.Namespace && refKindMatches(ref.Kind, c.Type) {
			return true
		}
	}
	return false
}

func refKindMatches(kind string, t v1alpha1.ClusterType) bool {
	switch kind {
	case "Cluster":
		return t == v1alpha1.ClusterTypeCapi
	case "SveltosCluster":
		return t == v1alpha1.ClusterTypeSveltos
	}
	return false
}
