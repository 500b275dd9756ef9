package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The ceiling's arithmetic, without ZooKeeper: the steps' writes/s, the
// rule that stops growing the sessions, the best step as the ceiling, and
// a lock's fraction of it (acq/s x writes/acq over the ceiling).
func TestCeilingArithmetic(t *testing.T) {
	var c Ceiling
	for _, s := range []CeilingStep{
		{Sessions: 4, Proposals: 6000, Elapsed: 2 * time.Second},  // 3000/s
		{Sessions: 16, Proposals: 8000, Elapsed: 2 * time.Second}, // 4000/s: +33%, grow on
		{Sessions: 64, Proposals: 7900, Elapsed: 2 * time.Second}, // 3950/s: saturated
	} {
		c.add(s)
	}
	if c.WritesPerSec != 4000 || c.Sessions != 16 || len(c.Steps) != 3 || c.atLeast() != "at least " {
		t.Errorf("ceiling %.0f writes/s with %d sessions over %d steps; want the best step, 4000 with 16", c.WritesPerSec, c.Sessions, len(c.Steps))
	}
	for _, tc := range []struct {
		prev, cur float64
		want      bool
	}{{3000, 4000, false}, {4000, 3950, true}, {4000, 4199, true}, {4000, 4200, false}} {
		if got := saturated(tc.prev, tc.cur); got != tc.want {
			t.Errorf("saturated(%.0f, %.0f) = %v, want %v", tc.prev, tc.cur, got, tc.want)
		}
	}

	// A queue lock: 2 writes per acquisition, 500 acq/s, uses a quarter
	// of 4000 writes/s.
	if got := c.Fraction(500, 2); got != 0.25 {
		t.Errorf("fraction %v, want 0.25", got)
	}
	r := Result{Variant: "sequential", Contenders: 16, Acquisitions: 1000, Elapsed: 2 * time.Second,
		Server: ServerCounts{Proposals: 2000}}
	if got := c.FractionOf(r); math.Abs(got-0.25) > 1e-9 {
		t.Errorf("fraction of a run of 500 acq/s at 2 writes/acq: %v, want 0.25", got)
	}
	var none *Ceiling
	for _, got := range []float64{none.Fraction(500, 2), c.Fraction(0, 2), c.Fraction(500, 0)} {
		if !math.IsNaN(got) {
			t.Errorf("fraction with an unknown term: %v, want NaN", got)
		}
	}
	if fractionStr(math.NaN()) != "-" || fractionStr(0.254) != "0.25" {
		t.Errorf("fractionStr: %q, %q", fractionStr(math.NaN()), fractionStr(0.254))
	}
}

// With a ceiling, every table gets "of ceiling" beside acq/s, the
// headline says it, and the summary still fits a terminal.
func TestCeilingInReport(t *testing.T) {
	rep := syntheticReport()
	rep.Ceiling = &Ceiling{WritesPerSec: 4000, Sessions: 16, Window: CeilingWindow, Saturated: true,
		Steps: []CeilingStep{{Sessions: 4, Proposals: 6000, Elapsed: 2 * time.Second}, {Sessions: 16, Proposals: 8000, Elapsed: 2 * time.Second}}}
	cols := rep.withCeiling(summaryColumns, "ceil")
	if len(cols) != len(summaryColumns)+1 || cols[3].head != "ceil" || cols[2].head != "acq/s [95% CI]" {
		t.Errorf("summary columns with a ceiling: %v", cols)
	}
	var sum, table, md bytes.Buffer
	if err := rep.WriteSummary(&sum, 16); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md, 16); err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(sum.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > SummaryWidth {
			t.Errorf("summary line %d has %d columns: %q", i+1, n, l)
		}
	}
	for name, out := range map[string]string{"summary": sum.String(), "table": table.String(), "markdown": md.String()} {
		for _, want := range []string{"ceil", "4000 writes/s"} {
			if !strings.Contains(out, want) || name != "summary" && !strings.Contains(out, "of ceiling") {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	if h := rep.Headline(16).String(); !strings.Contains(h, "quorum-write ceiling is 4000 writes/s") ||
		!strings.Contains(h, "bounded by handoff latency, many locks by the write ceiling") {
		t.Errorf("headline %q does not say the ceiling", h)
	}
	t.Logf("summary:\n%s", sum.String())
}
