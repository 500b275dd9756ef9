package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// figure is one SVG: one line per variant, contenders on a log x axis.
type figure struct {
	file, title, ylabel string
	logY                bool
	value               func(Result) (float64, bool)
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

var figures = []figure{
	{file: "watchers.svg", title: "Watchers fired per release (other sessions)", ylabel: "watchers fired per release, mntr (log)", logY: true,
		value: func(r Result) (float64, bool) { return r.WatchersPerRelease(), r.Acquisitions > 0 }},
	{file: "writes.svg", title: "Quorum writes per acquisition", ylabel: "leader's proposals per acquisition (log)", logY: true,
		value: func(r Result) (float64, bool) { return r.WritesPerAcquisition(), r.Acquisitions > 0 }},
	{file: "handoff-p50.svg", title: "Handoff latency, p50", ylabel: "release to next acquire, ms (log)", logY: true,
		value: func(r Result) (float64, bool) { return millis(r.Handoff.P50), r.Handoff.Count > 0 }},
	{file: "handoff-p99.svg", title: "Handoff latency, p99", ylabel: "release to next acquire, ms (log)", logY: true,
		value: func(r Result) (float64, bool) { return millis(r.Handoff.P99), r.Handoff.Count > 0 }},
	{file: "throughput.svg", title: "Throughput", ylabel: "acquisitions per second",
		value: func(r Result) (float64, bool) { return r.Throughput(), r.Acquisitions > 0 }},
}

// WriteFigures writes the SVG figures into dir and returns their paths.
func (r *Report) WriteFigures(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, f := range figures {
		p, err := r.plot(f)
		if err != nil {
			return out, fmt.Errorf("bench: %s: %w", f.file, err)
		}
		path := filepath.Join(dir, f.file)
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return out, fmt.Errorf("bench: %s: %w", f.file, err)
		}
		out = append(out, path)
	}
	return out, nil
}

func (r *Report) plot(f figure) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = f.title
	p.X.Label.Text = "contenders (one session each, log scale)"
	p.Y.Label.Text = f.ylabel
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, n := range r.contenders() {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: strconv.Itoa(n)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	// A log axis needs a positive range, also with one N or no data.
	p.X.Min, p.X.Max = 1/1.3, 1.3
	if ns := r.contenders(); len(ns) > 0 {
		p.X.Min, p.X.Max = float64(slices.Min(ns))/1.3, float64(slices.Max(ns))*1.3
	}
	if f.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	} else {
		p.Y.Min = 0
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	minY, maxY := 0.0, 0.0
	first := true
	for i, v := range r.variants() {
		var xys plotter.XYs
		for _, n := range r.contenders() {
			x, ok := r.Find(v, n)
			if !ok {
				continue
			}
			y, ok := f.value(x)
			if !ok || (f.logY && y <= 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(n), Y: y})
			if first || y < minY {
				minY = y
			}
			if first || y > maxY {
				maxY = y
			}
			first = false
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		// The same look for a variant in every figure and every run.
		k := slices.Index(order, v)
		if k < 0 {
			k = len(order) + i
		}
		line.Color = plotutil.Color(k)
		line.Dashes = plotutil.Dashes(k)
		line.Width = vg.Points(1.5)
		points.Color = plotutil.Color(k)
		points.Shape = plotutil.Shape(k)
		p.Add(line, points)
		p.Legend.Add(v, line, points)
	}
	if first {
		if f.logY {
			p.Y.Min, p.Y.Max = 0.1, 10 // a log axis needs a positive range
		} else {
			p.Y.Max = 1
		}
		return p, nil // nothing to draw: an empty, labelled figure
	}
	// Headroom above the data for the legend (top left).
	rows := float64(len(r.variants()))
	if f.logY {
		p.Y.Min = minY / 1.3
		p.Y.Max = maxY * math.Pow(maxY/p.Y.Min, 0.045*rows)
	} else {
		p.Y.Max = maxY * (1.1 + 0.09*rows)
	}
	return p, nil
}

// logTicks labels 1, 2 and 5 times every power of ten in range, so that a
// log axis spanning one decade still has readable labels.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		base := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * base
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			out = append(out, t)
		}
	}
	return out
}
