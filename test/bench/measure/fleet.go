package measure

import (
	"iter"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"periscope.dev/periscope/test/bench/fixtures"
)

// Fleet is what the measurements need to know of the loaded fleet.
type Fleet struct {
	Gen           *fixtures.Generator
	Clusters      int
	Summaries     int
	ExpectedReady int
	// Candidates are the clusters one summary away from Ready.
	Candidates []Candidate
	// ProfileMatches counts the clusters each ClusterProfile matches.
	ProfileMatches []fixtures.ProfileMatch
}

// Candidate is a cluster that its pending summary keeps from Ready.
type Candidate struct {
	Namespace, Name string
	// Resource is the cluster's resource (Cluster API or Sveltos).
	Resource schema.GroupVersionResource
	Summary  *fixtures.PendingSummary
}

// Key returns namespace/name.
func (c Candidate) Key() string { return c.Namespace + "/" + c.Name }

// Scan walks the generated fleet once, keeping only what the measurements need.
func Scan(g *fixtures.Generator) Fleet {
	n := g.Config().Clusters
	f := Fleet{Gen: g, Clusters: n, ProfileMatches: g.ProfileMatches(n)}
	for i := 0; i < n; i++ {
		c := g.Cluster(i)
		f.Summaries += len(c.Summaries)
		if c.Ready {
			f.ExpectedReady++
		}
		if c.Pending != nil {
			f.Candidates = append(f.Candidates, Candidate{Namespace: c.Namespace, Name: c.Name, Resource: c.Object.Resource, Summary: c.Pending})
		}
	}
	return f
}

// Objects yields the fixtures of clusters [from, to): each cluster, then its summaries.
func Objects(g *fixtures.Generator, from, to int) iter.Seq[fixtures.Object] {
	return func(yield func(fixtures.Object) bool) {
		for i := from; i < to; i++ {
			c := g.Cluster(i)
			if !yield(c.Object) {
				return
			}
			for _, s := range c.Summaries {
				if !yield(s) {
					return
				}
			}
		}
	}
}
