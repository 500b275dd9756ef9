package bench

import (
	"fmt"
	"image/color"
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
// A figure of a per-round figure (fig) draws each point at the median of
// the rounds, with the interval as an error bar; the others draw the
// merged rounds' value (counts that hardly vary from round to round).
type figure struct {
	file, title, ylabel string
	logY                bool
	value               func(Result) (float64, bool)
	fig                 *Figure
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func figOf(f Figure) *Figure { return &f }

var figures = []figure{
	{file: "watchers.svg", title: "Watchers fired per release (other sessions)", ylabel: "watchers fired per release, mntr (log)", logY: true,
		value: func(r Result) (float64, bool) { return r.WatchersPerRelease(), r.Acquisitions > 0 }},
	{file: "writes.svg", title: "Quorum writes per acquisition", ylabel: "leader's proposals per acquisition (log)", logY: true,
		value: func(r Result) (float64, bool) { return r.WritesPerAcquisition(), r.Acquisitions > 0 }},
	{file: "handoff-p50.svg", title: "Handoff latency, p50 (median of the rounds, 95% CI)", ylabel: "release to next acquire, ms (log)", logY: true,
		fig: figOf(FigHandoffP50)},
	{file: "handoff-p99.svg", title: "Handoff latency, p99 (median of the rounds, 95% CI)", ylabel: "release to next acquire, ms (log)", logY: true,
		fig: figOf(FigHandoffP99)},
	{file: "throughput.svg", title: "Throughput (median of the rounds, 95% CI)", ylabel: "acquisitions per second",
		fig: figOf(FigThroughput)},
}

// point is one variant's value at one N, with its interval when the
// figure has one (lo == hi == y otherwise).
type point struct{ n, y, lo, hi float64 }

// points are variant v's points in f, leaving out what a log axis cannot
// show.
func (r *Report) points(f figure, v string) []point {
	var out []point
	for _, n := range r.contenders() {
		x, ok := r.Find(v, n)
		if !ok {
			continue
		}
		p := point{n: float64(n)}
		if f.fig != nil {
			e := x.Estimate(*f.fig)
			if e.N == 0 || math.IsNaN(e.Median) {
				continue
			}
			p.y, p.lo, p.hi = e.Median, e.Lo, e.Hi
		} else {
			y, ok := f.value(x)
			if !ok {
				continue
			}
			p.y, p.lo, p.hi = y, y, y
		}
		if f.logY && p.lo <= 0 {
			continue
		}
		out = append(out, p)
	}
	return out
}

// errorBars are a variant's intervals, for plotter.NewYErrorBars.
type errorBars struct {
	plotter.XYs
	lo, hi []float64
}

func (e errorBars) YError(i int) (float64, float64) {
	return e.XYs[i].Y - e.lo[i], e.hi[i] - e.XYs[i].Y
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
	p.X.Min, p.X.Max = 1/1.4, 1.4
	if ns := r.contenders(); len(ns) > 0 {
		p.X.Min, p.X.Max = float64(slices.Min(ns))/1.4, float64(slices.Max(ns))*1.4
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
	vs := r.variants()
	for i, v := range vs {
		pts := r.points(f, v)
		if len(pts) == 0 {
			continue
		}
		// Each variant a little to the side of its N, so that the error
		// bars of variants with close values do not hide each other.
		shift := math.Pow(1.04, float64(i)-float64(len(vs)-1)/2)
		bars := errorBars{}
		for _, pt := range pts {
			bars.XYs = append(bars.XYs, plotter.XY{X: pt.n * shift, Y: pt.y})
			bars.lo, bars.hi = append(bars.lo, pt.lo), append(bars.hi, pt.hi)
			if first || pt.lo < minY {
				minY = pt.lo
			}
			if first || pt.hi > maxY {
				maxY = pt.hi
			}
			first = false
		}
		line, points, err := plotter.NewLinePoints(bars.XYs)
		if err != nil {
			return nil, err
		}
		// The same look for a variant in every figure and every run.
		k := slices.Index(order, v)
		if k < 0 {
			k = len(order) + i
		}
		line.Color = variantColor(k)
		line.Dashes = plotutil.Dashes(k)
		line.Width = vg.Points(1.5)
		points.Color = variantColor(k)
		points.Shape = plotutil.Shape(k)
		p.Add(line, points)
		if f.fig != nil {
			eb, err := plotter.NewYErrorBars(bars)
			if err != nil {
				return nil, err
			}
			eb.LineStyle.Color = variantColor(k)
			eb.LineStyle.Width = vg.Points(1)
			eb.CapWidth = vg.Points(4)
			p.Add(eb)
		}
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

// variantColor is the k-th variant's colour: plotutil's seven soft
// colours, then dark grey, so that the eighth (kazoo) does not take the
// first one's (naive) again, then plotutil's dark colours.
func variantColor(k int) color.Color {
	switch n := len(plotutil.SoftColors); {
	case k < n:
		return plotutil.Color(k)
	case k == n:
		return color.Gray{Y: 70}
	default:
		return plotutil.DarkColors[(k-n-1)%len(plotutil.DarkColors)]
	}
}
