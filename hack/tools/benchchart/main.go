// Command benchchart draws the charts of docs/benchmarks.md from docs/benchmarks.json (written
// by test/bench/cmd/periscope-bench): the latency distributions of notifications, the polling
// alternative and the fan-out, and the durations of each kind of list.
//
//	go run . -in ../../../docs/benchmarks.json -out ../../../docs
//
// It lives in a module of its own so that gonum/plot stays out of the product's go.mod; it
// therefore reads only the fields it draws, by their JSON names (see test/bench/results).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"log"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The chart files, as docs/benchmarks.md names them (test/bench/results).
const (
	chartLatency = "benchmarks-latency.png"
	chartList    = "benchmarks-list.png"
)

type report struct {
	Meta struct {
		Commit string `json:"commit"`
	} `json:"meta"`
	Scales []scale `json:"scales"`
}

type scale struct {
	Clusters int `json:"clusters"`
	List     *struct {
		Variants []struct {
			Name      string    `json:"name"`
			SamplesMs []float64 `json:"samplesMs"`
		} `json:"variants"`
	} `json:"list"`
	Notify *struct {
		PeriscopeMs []float64 `json:"periscopeMs"`
		FloorMs     []float64 `json:"floorMs"`
		PollingMs   []float64 `json:"pollingMs"`
	} `json:"notify"`
	FanOut *struct {
		Watchers int `json:"watchers"`
		Rounds   []struct {
			LatenciesMs []float64 `json:"latenciesMs"`
		} `json:"rounds"`
	} `json:"fanOut"`
}

func main() {
	in := flag.String("in", "docs/benchmarks.json", "the benchmark results")
	out := flag.String("out", "docs", "the directory to write the charts to")
	flag.Parse()
	b, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		log.Fatalf("decode %s: %v", *in, err)
	}
	sort.Slice(r.Scales, func(i, j int) bool { return r.Scales[i].Clusters < r.Scales[j].Clusters })
	for name, chart := range map[string]func(report) (chart, error){
		chartLatency: latencyChart, chartList: listChart,
	} {
		c, err := chart(r)
		if errors.Is(err, errNoData) {
			fmt.Printf("skipped %s: %v\n", name, err)
			continue
		}
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		path := filepath.Join(*out, name)
		if err := c.save(path); err != nil {
			log.Fatalf("save %s: %v", path, err)
		}
		fmt.Println("wrote", path)
	}
}

// errNoData is returned for a chart whose measurements were skipped or failed.
var errNoData = errors.New("no samples in the results")

// chart is a plot, its size, and a legend drawn below it (a legend inside the plot would hide
// some of the curves).
type chart struct {
	p       *plot.Plot
	legend  *plot.Legend
	entries int
	w, h    vg.Length
}

func (c chart) save(path string) error {
	legendH := vg.Length(0)
	if c.legend != nil && c.entries > 0 {
		legendH = vg.Length(c.entries)*vg.Points(8.5) + vg.Points(10)
	}
	img := vgimg.New(c.w, c.h+legendH)
	dc := draw.New(img)
	c.p.Draw(draw.Crop(dc, 0, 0, legendH, 0))
	if legendH > 0 {
		c.legend.Draw(draw.Crop(dc, vg.Points(40), 0, 0, -c.h))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// floor keeps values positive for a logarithmic axis.
func floor(v float64) float64 { return max(v, 0.01) }

// ecdf returns the empirical cumulative distribution of samples as a step line.
func ecdf(samples []float64) plotter.XYs {
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	pts := make(plotter.XYs, 0, 2*len(s))
	for i, v := range s {
		pts = append(pts,
			plotter.XY{X: floor(v), Y: float64(i) / float64(len(s))},
			plotter.XY{X: floor(v), Y: float64(i+1) / float64(len(s))})
	}
	return pts
}

// series is one distribution of the latency chart.
type series struct {
	kind    int // colour
	label   string
	samples []float64
}

func latencyChart(r report) (chart, error) {
	p := plot.New()
	p.Title.Text = "Latency distributions (cumulative)"
	if r.Meta.Commit != "" {
		p.Title.Text += " at " + r.Meta.Commit
	}
	p.X.Label.Text = "milliseconds from the source change (log scale)"
	p.Y.Label.Text = "fraction of samples"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(9)
	n := 0
	for si, s := range r.Scales {
		var all []series
		if s.Notify != nil {
			all = append(all,
				series{0, "ClusterReadiness watcher (Periscope)", s.Notify.PeriscopeMs},
				series{1, "ClusterSummary watcher (floor)", s.Notify.FloorMs},
				series{2, "polling summaries every 10s (modelled)", s.Notify.PollingMs})
		}
		if s.FanOut != nil {
			var fan []float64
			for _, rd := range s.FanOut.Rounds {
				fan = append(fan, rd.LatenciesMs...)
			}
			all = append(all, series{3, fmt.Sprintf("fan-out to %d watchers", s.FanOut.Watchers), fan})
		}
		for _, x := range all {
			if len(x.samples) == 0 {
				continue
			}
			l, err := plotter.NewLine(ecdf(x.samples))
			if err != nil {
				return chart{}, err
			}
			l.Color = plotutil.Color(x.kind)
			l.Width = vg.Points(1.5)
			l.Dashes = plotutil.Dashes(len(r.Scales) - 1 - si) // the largest fleet solid
			p.Add(l)
			legend.Add(fmt.Sprintf("%s, N=%d", x.label, s.Clusters), l)
			n++
		}
	}
	if n == 0 {
		return chart{}, fmt.Errorf("latency: %w", errNoData)
	}
	return chart{p: p, legend: &legend, entries: n, w: 9 * vg.Inch, h: 5 * vg.Inch}, nil
}

func listChart(r report) (chart, error) {
	p := plot.New()
	p.Title.Text = "List durations through kube-apiserver"
	p.X.Label.Text = "milliseconds (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	var names []string
	loc := 0.0
	for si, s := range r.Scales {
		if s.List == nil {
			continue
		}
		for _, v := range s.List.Variants {
			if len(v.SamplesMs) == 0 {
				continue
			}
			vals := make(plotter.Values, len(v.SamplesMs))
			for i, x := range v.SamplesMs {
				vals[i] = floor(x)
			}
			b, err := plotter.NewBoxPlot(vg.Points(10), loc, vals)
			if err != nil {
				return chart{}, err
			}
			b.Horizontal = true
			b.FillColor = fill(si)
			p.Add(b)
			names = append(names, fmt.Sprintf("%s, N=%d", v.Name, s.Clusters))
			loc++
		}
	}
	if len(names) == 0 {
		return chart{}, fmt.Errorf("lists: %w", errNoData)
	}
	p.NominalY(names...)
	return chart{p: p, w: 9 * vg.Inch, h: vg.Length(1.5+0.3*float64(len(names))) * vg.Inch}, nil
}

// fill is a light version of a scale's colour.
func fill(scale int) color.Color {
	r, g, b, _ := plotutil.Color(scale).RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x60}
}
