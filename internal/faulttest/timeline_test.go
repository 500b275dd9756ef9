package faulttest

import (
	"image/color"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A timeline is one fault run drawn for people: one row per client, its
// waits and holds as bars, the fault's moments as vertical lines.
type timelineRow struct {
	name string
	bars []bar
}

type bar struct {
	from, to time.Duration
	kind     string // "holds" or "waits"
}

type mark struct {
	at   time.Duration
	what string
}

var barColors = map[string]color.Color{
	"holds": color.RGBA{R: 0x2b, G: 0x8a, B: 0x3e, A: 0xff},
	"waits": color.RGBA{R: 0xb0, G: 0xb0, B: 0xb0, A: 0xff},
}

// drawTimeline writes the rows and marks as an SVG to file, in seconds
// of the test's tape.
func drawTimeline(t *testing.T, file, title string, rows []timelineRow, marks []mark) {
	t.Helper()
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds"
	p.Y.Min, p.Y.Max = -0.2, float64(len(rows))+0.5
	var ticks []plot.Tick
	for i, r := range rows {
		y := float64(len(rows) - i)
		ticks = append(ticks, plot.Tick{Value: y, Label: r.name})
		for _, b := range r.bars {
			l, err := plotter.NewLine(plotter.XYs{{X: b.from.Seconds(), Y: y}, {X: b.to.Seconds(), Y: y}})
			if err != nil {
				t.Fatal(err)
			}
			l.Width, l.Color = vg.Points(14), barColors[b.kind]
			p.Add(l)
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	for i, m := range marks {
		l, err := plotter.NewLine(plotter.XYs{{X: m.at.Seconds(), Y: 0.6}, {X: m.at.Seconds(), Y: float64(len(rows)) + 0.4}})
		if err != nil {
			t.Fatal(err)
		}
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(l)
		labels, err := plotter.NewLabels(plotter.XYLabels{
			XYs:    plotter.XYs{{X: m.at.Seconds(), Y: 0.45 - 0.22*float64(i%3)}}, // staggered: marks can be close
			Labels: []string{m.what},
		})
		if err != nil {
			t.Fatal(err)
		}
		for j := range labels.TextStyle {
			labels.TextStyle[j].XAlign = draw.XCenter
		}
		p.Add(labels)
	}
	p.Legend.Top = true
	for _, kind := range []string{"waits", "holds"} {
		l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: -10}, {X: 0, Y: -10}})
		l.Width, l.Color = vg.Points(8), barColors[kind]
		p.Legend.Add(kind, l)
	}
	if err := p.Save(8*vg.Inch, 3*vg.Inch, file); err != nil {
		t.Fatal(err)
	}
	t.Logf("timeline drawn in %s", file)
}
