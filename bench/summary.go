package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// SummaryWidth is the most columns a line of WriteSummary takes: a
// terminal's summary stays readable in a 100-column window; the wide
// table goes to the files (WriteTable, WriteMarkdown).
const SummaryWidth = 100

// summaryColumns are the compact table's columns.
var summaryColumns = []column{
	{"variant", func(r Result) string { return r.Variant }},
	{"N", func(r Result) string { return fmt.Sprint(r.Contenders) }},
	{"acq/s [95% CI]", func(r Result) string { return estStr(r.Estimate(FigThroughput)) }},
	{"acquire p50 ms", func(r Result) string { return estStr(r.Estimate(FigAcquireP50)) }},
	{"handoff p50 ms", func(r Result) string { return estStr(r.Estimate(FigHandoffP50)) }},
	{"writes/acq", func(r Result) string { return fmt.Sprintf("%.2f", r.WritesPerAcquisition()) }},
	{"woken/rel", func(r Result) string { return fmt.Sprintf("%.2f", r.WatchersPerRelease()) }},
}

// WriteSummary prints what zklocks bench shows on a terminal, in
// SummaryWidth columns at most: one compact table (medians over the
// rounds with their intervals, and the servers' counts), sequential over
// each peer at every N paired by round, and the headline at headlineN.
func (r *Report) WriteSummary(w io.Writer, headlineN int) error {
	para := func(s string) {
		for _, l := range wrap(s, SummaryWidth, "  ") {
			fmt.Fprintln(w, l)
		}
	}
	para(fmt.Sprintf("%d variants, N = %s, %s; medians over the rounds with their %s.",
		len(r.variants()), intsStr(r.contenders()), r.roundsPhrase(), r.intervalPhrase()))
	fmt.Fprintln(w)
	if err := r.writeSummaryTable(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	para("writes/acq: the leader's proposals per acquisition; woken/rel: watchers the servers fired per " +
		"release, less the releaser's own (both from mntr, for every client alike).")
	if r.Ceiling != nil {
		para("ceil: acq/s x writes/acq over the ensemble's quorum-write ceiling, measured before the runs: " +
			fmt.Sprintf("%s%.0f writes/s from %d sessions pipelining create+delete pairs (the leader's zk_proposal_count).",
				r.Ceiling.atLeast(), r.Ceiling.WritesPerSec, r.Ceiling.Sessions))
	}
	fmt.Fprintln(w)
	if err := r.writeComparisonsText(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if len(r.ManyLocks) > 0 {
		if err := r.WriteManyLocks(w, false); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	para(r.Headline(headlineN).String() + ".")
	if r.hasExternal() {
		para("curator, kazoo: run by a driver in a child process; the counts seen on the Go client's wire " +
			"(notifications, requests, the handoff split) are \"-\" for them in the full table.")
	}
	for _, s := range r.Env.Skipped {
		para("not run: " + s)
	}
	return nil
}

func (r *Report) writeSummaryTable(w io.Writer) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	summaryColumns := r.withCeiling(summaryColumns, "ceil")
	heads := make([]string, len(summaryColumns))
	for i, c := range summaryColumns {
		heads[i] = c.head
		if r.roundsKept() == 0 {
			heads[i] = strings.TrimSuffix(c.head, " [95% CI]")
		}
	}
	fmt.Fprintln(tw, strings.Join(heads, "\t")+"\t")
	prev := ""
	for _, x := range r.sortedResults() {
		if prev != "" && x.Variant != prev {
			fmt.Fprintln(tw, strings.Repeat("\t", len(summaryColumns)))
		}
		prev = x.Variant
		cells := make([]string, len(summaryColumns))
		for i, c := range summaryColumns {
			cells[i] = c.cell(x)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return trimmed(w, b.String())
}

func (r *Report) hasExternal() bool {
	for _, x := range r.Results {
		if x.External {
			return true
		}
	}
	return false
}

// roundsPhrase says how the runs were made, for the summary's first line.
func (r *Report) roundsPhrase() string {
	e := r.Env
	per := fmt.Sprintf("%v per variant and N", e.Duration)
	if e.Acquisitions > 0 {
		per = fmt.Sprintf("%d acquisitions per variant and N", e.Acquisitions)
	}
	if e.Rounds > 1 {
		per += fmt.Sprintf(" in %d rounds taken in turns", e.Rounds)
	}
	return per
}

func intsStr(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

// trimmed writes s to w without the spaces a tabwriter leaves at the end
// of its lines (a blank row of empty cells is a line of spaces otherwise).
func trimmed(w io.Writer, s string) error {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}
