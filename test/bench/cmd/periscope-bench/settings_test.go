package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadSettings(t *testing.T) {
	env := map[string]string{"BENCH_SCALES": "200, 400", "BENCH_CHURN_RATES": "50,100", "BENCH_CHURN_STEP": "2s", "BENCH_SKIP": "churn"}
	s, err := readSettings(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{200, 400}, s.Scales); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]float64{50, 100}, s.ChurnRates); diff != "" {
		t.Error(diff)
	}
	if s.ChurnStep != 2*time.Second || s.NotifySamples != 200 || !s.Skip["churn"] || s.raw["BENCH_SCALES"] != "200, 400" {
		t.Errorf("settings %+v", s)
	}
	for _, bad := range []map[string]string{
		{"BENCH_SCALES": "5000,1000"},
		{"BENCH_SCALES": "x"},
		{"BENCH_LIST_BUDGET": "-1s"},
		{"BENCH_SKIP": "sync"},
	} {
		if _, err := readSettings(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}
