package measure

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMetrics(t *testing.T) {
	text := `# HELP periscope_clusterreadiness_computations_total Computations.
# TYPE periscope_clusterreadiness_computations_total counter
periscope_clusterreadiness_computations_total 1234
apiserver_request_total{code="200",verb="LIST",note="a } in a label"} 3
apiserver_request_total{code="500",verb="GET"} 2 1700000000000
go_memstats_heap_alloc_bytes 4.5e+07
malformed_line
`
	want := map[string]float64{
		"periscope_clusterreadiness_computations_total": 1234,
		"apiserver_request_total":                       5,
		"go_memstats_heap_alloc_bytes":                  4.5e7,
	}
	if diff := cmp.Diff(want, parseMetrics(text)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFloorValues(t *testing.T) {
	in := `{"message":"a <b> & \"c\" \\ é"}`
	got := unescaped(in)
	encoded, _ := json.Marshal(got)
	if len(encoded) != len(got)+2 {
		t.Errorf("%q needs escaping in JSON: %s", got, encoded)
	}
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abcdef", 3, "abc"},
		{"ab", 5, "ab..."},
		{"ab", -4, "a"},
	} {
		if got := fit(tc.s, tc.n); got != tc.want {
			t.Errorf("fit(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
