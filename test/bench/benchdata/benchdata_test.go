package benchdata

import (
	"testing"

	"periscope.dev/periscope/test/bench/fixtures"
)

// TestComputedAsGenerated checks that Periscope's computation agrees with what the generator
// meant: the benchmarks rely on it (which clusters are Ready, which one summary away).
func TestComputedAsGenerated(t *testing.T) {
	const n = 300
	f, err := New(n)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := fixtures.New(fixtures.DefaultConfig(n))
	for i, obj := range f.Objects() {
		c := g.Cluster(i)
		if obj.Status.Ready != c.Ready {
			t.Errorf("%s: computed Ready %v, generated %v (%+v)", c.Key(), obj.Status.Ready, c.Ready, obj.Status.Conditions)
		}
		if int(obj.Status.Addons.Total) != len(c.Profiles) {
			t.Errorf("%s: %d add-ons computed, %d profiles match", c.Key(), obj.Status.Addons.Total, len(c.Profiles))
		}
		if c.Pending != nil && int(obj.Status.Addons.Deployed) != len(c.Profiles)-1 {
			t.Errorf("%s: %d of %d add-ons deployed, want all but the pending one", c.Key(), obj.Status.Addons.Deployed, len(c.Profiles))
		}
	}
}
