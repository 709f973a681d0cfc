package stats

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // unsorted on purpose
	}
	for _, tc := range []struct {
		name    string
		samples []float64
		want    Summary
	}{
		{"none", nil, Summary{}},
		{"one", []float64{3}, Summary{N: 1, Min: 3, Median: 3, P90: 3, P99: 3, Max: 3, Mean: 3}},
		{"even count takes the lower middle", []float64{4, 1, 3, 2}, Summary{N: 4, Min: 1, Median: 2, P90: 4, P99: 4, Max: 4, Mean: 2.5}},
		{"1 to 100", hundred, Summary{N: 100, Min: 1, Median: 50, P90: 90, P99: 99, Max: 100, Mean: 50.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Summarize(tc.samples)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPercentileDoesNotSortItsInput(t *testing.T) {
	in := []float64{3, 1, 2}
	if got := Percentile(in, 100); got != 3 {
		t.Errorf("p100 = %v", got)
	}
	if diff := cmp.Diff([]float64{3, 1, 2}, in); diff != "" {
		t.Errorf("input changed:\n%s", diff)
	}
}

func TestMillisAndRatio(t *testing.T) {
	if diff := cmp.Diff([]float64{1.5, 2000}, Millis([]time.Duration{1500 * time.Microsecond, 2 * time.Second})); diff != "" {
		t.Error(diff)
	}
	if Ratio(1, 0) != 0 || Ratio(3, 2) != 1.5 {
		t.Error("Ratio")
	}
}
