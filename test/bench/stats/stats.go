// Package stats summarizes benchmark samples: percentiles by the nearest-rank method, so that
// every figure reported is a value that was measured.
package stats

import (
	"math"
	"sort"
	"time"
)

// Summary describes a set of samples, in the unit of the samples.
type Summary struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
}

// Summarize returns the summary of samples; a zero Summary when there are none.
func Summarize(samples []float64) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	return Summary{
		N: len(s), Min: s[0], Max: s[len(s)-1], Mean: sum / float64(len(s)),
		Median: percentileSorted(s, 50), P90: percentileSorted(s, 90), P99: percentileSorted(s, 99),
	}
}

// Percentile returns the p-th percentile (0 < p <= 100) of samples by nearest rank: the
// smallest sample such that at least p% of the samples are at most it.
func Percentile(samples []float64, p float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	return percentileSorted(s, p)
}

func percentileSorted(s []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// Millis converts durations to milliseconds.
func Millis(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

// Ratio is a/b, or 0 when b is 0 (a figure that could not be measured).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
