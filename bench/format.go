package bench

import (
	"fmt"
	"math"
	"strings"
)

// sig3 prints x with three significant digits at most (four for numbers
// of thousands and more, which keep their integer part): short enough
// for a cell with an interval beside it.
func sig3(x float64) string {
	// The thresholds are where rounding would add a digit (99.96 is 100).
	switch a := math.Abs(x); {
	case a >= 99.95:
		return fmt.Sprintf("%.0f", x)
	case a >= 9.995:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

// estStr prints a median with its interval, "4.12 [3.90-4.40]", or the
// median alone when there is a single value, or "-" when there is none.
func estStr(e Estimate) string {
	switch {
	case e.N == 0 || math.IsNaN(e.Median):
		return "-"
	case !e.HasInterval():
		return sig3(e.Median)
	default:
		return fmt.Sprintf("%s [%s-%s]", sig3(e.Median), sig3(e.Lo), sig3(e.Hi))
	}
}

// ratioEst prints a ratio with its interval, "1.08x [0.95-1.20]", and
// then noDiff, if any, when the interval spans 1.
func ratioEst(e Estimate, noDiff string) string {
	if e.N == 0 || e.Median <= 0 {
		return "-"
	}
	s := fmt.Sprintf("%.2fx", e.Median)
	if e.HasInterval() {
		s += fmt.Sprintf(" [%.2f-%.2f]", e.Lo, e.Hi)
		if e.NoDifference() && noDiff != "" {
			s += " " + noDiff
		}
	}
	return s
}

// wrap breaks a paragraph into lines of at most width columns (a word
// longer than width keeps a line of its own), each after indent but the
// first.
func wrap(s string, width int, indent string) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			out = append(out, line)
			line = indent + w
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
