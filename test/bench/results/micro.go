package results

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"periscope.dev/periscope/test/bench/stats"
)

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.+)$`)

// ParseMicro reads `go test -bench` output (the format benchstat reads) and summarizes each
// benchmark by the median of its runs, per unit.
func ParseMicro(r io.Reader) ([]Micro, error) {
	type key struct{ pkg, name string }
	samples := map[key]map[string][]float64{}
	runs := map[key]int{}
	var order []key
	pkg := ""
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		k := key{pkg, m[1]}
		if samples[k] == nil {
			samples[k] = map[string][]float64{}
			order = append(order, k)
		}
		runs[k]++
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark %s: value %q: %w", k.name, f[i], err)
			}
			samples[k][f[i+1]] = append(samples[k][f[i+1]], v)
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("read benchmark output: %w", err)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].pkg < order[j].pkg })
	out := make([]Micro, 0, len(order))
	for _, k := range order {
		m := Micro{Package: k.pkg, Name: k.name, Runs: runs[k], Metrics: map[string]float64{}}
		for unit, v := range samples[k] {
			m.Metrics[unit] = stats.Summarize(v).Median
		}
		out = append(out, m)
	}
	return out, nil
}
