package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// comparisonFigs are the figures the comparison tables pair by round.
var comparisonFigs = []Figure{FigThroughput, FigHandoffP50, FigAcquireP50}

// comparisonTitle says what a comparison table of fig holds and which way
// is better, in less than 100 columns.
func comparisonTitle(fig Figure) string {
	better := "above 1: sequential is faster"
	if fig.Lower() {
		better = "below 1: sequential is faster"
	}
	return fmt.Sprintf("%s, sequential over the other lock (%s)", fig, better)
}

// comparisonRows is sequential over each of others at every N, for fig:
// the heading (N, then the others) and one row per N that ran sequential.
func (r *Report) comparisonRows(fig Figure, others []string, noDiff string) (head []string, rows [][]string) {
	head = append([]string{"N"}, others...)
	for _, n := range r.contenders() {
		if _, ok := r.Find("sequential", n); !ok {
			continue
		}
		row := []string{fmt.Sprint(n)}
		for _, o := range others {
			e, ok := r.Compare("sequential", o, n, fig)
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, ratioEst(e, noDiff))
		}
		if strings.Trim(strings.Join(row[1:], ""), "-") != "" {
			rows = append(rows, row)
		}
	}
	return head, rows
}

// others are the variants present other than sequential, keep filtering
// them (nil: all).
func (r *Report) others(keep []string) []string {
	var out []string
	for _, v := range r.variants() {
		if v != "sequential" && (keep == nil || slices.Contains(keep, v)) {
			out = append(out, v)
		}
	}
	return out
}

// writeComparisons writes the README's comparison tables: sequential
// over every other variant, at every N, for each paired figure.
func (r *Report) writeComparisons(w io.Writer) {
	others := r.others(nil)
	if len(others) == 0 {
		return
	}
	var b strings.Builder
	for _, fig := range comparisonFigs {
		head, rows := r.comparisonRows(fig, others, "no difference")
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s:\n\n| %s |\n|%s\n", capitalize(comparisonTitle(fig)), strings.Join(head, " | "),
			strings.Repeat("---:|", len(head)))
		for _, row := range rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return
	}
	fmt.Fprintf(w, "## Comparisons\n\n")
	if r.roundsKept() == 0 {
		fmt.Fprintf(w, "Each cell is the ratio of sequential's whole-run figure to the other lock's: these results were "+
			"written before the rounds were kept, so there is no pairing and no interval.\n\n%s", b.String())
		return
	}
	fmt.Fprintf(w, "Each cell is the median of the ratios of round i of sequential to round i of the other lock at the same N "+
		"(the two ran seconds apart, in the same turn), with its %s; \"no difference\" where the interval spans 1.\n\n%s",
		r.intervalPhrase(), b.String())
}

// writeComparisonsText writes the terminal's comparison tables: sequential
// over the peers only, to stay within 100 columns.
func (r *Report) writeComparisonsText(w io.Writer) error {
	others := r.others(Peers)
	if len(others) == 0 {
		return nil
	}
	if r.roundsKept() == 0 {
		fmt.Fprintf(w, "Sequential over each peer, whole runs (no rounds kept: no pairing, no interval).\n\n")
	} else {
		fmt.Fprintf(w, "Sequential over each peer: median of the ratios of paired rounds [95%% CI]; no diff: the CI spans 1.\n\n")
	}
	for i, fig := range []Figure{FigThroughput, FigHandoffP50} {
		head, rows := r.comparisonRows(fig, others, "no diff")
		if len(rows) == 0 {
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s:\n", comparisonTitle(fig))
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
		fmt.Fprintln(tw, "  "+strings.Join(head, "\t")+"\t")
		for _, row := range rows {
			fmt.Fprintln(tw, "  "+strings.Join(row, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := trimmed(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// intervalPhrase names the report's intervals: 95% ones, or, when there
// are too few rounds for 95%, the rounds' range and the level it reaches,
// or none for a results.json written before rounds were kept.
func (r *Report) intervalPhrase() string {
	k := r.roundsKept()
	switch _, level := orderIndex(max(k, 1), ConfidenceLevel); {
	case k == 0:
		return "no interval (whole-run figures: these results were written before the rounds were kept)"
	case level >= ConfidenceLevel:
		return "95% confidence interval (order statistics, distribution-free)"
	default:
		return fmt.Sprintf("range over the %d rounds (too few for a 95%% interval: it holds the median with probability %.1f%%)", k, 100*level)
	}
}

// roundsKept is the most rounds a result keeps figures of (0 for a
// results.json written before they were kept).
func (r *Report) roundsKept() int {
	k := 0
	for _, x := range r.Results {
		k = max(k, len(x.PerRound))
	}
	return k
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
