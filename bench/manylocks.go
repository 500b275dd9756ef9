package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// ManyLocksVariants are the locks the many-locks section runs by
// default: sequential beside go-zookeeper's Lock, Curator and kazoo.
var ManyLocksVariants = []string{"sequential", "zk-peer", "curator", "kazoo"}

// ManyLocksParams is how the many-locks section was run, for its report.
type ManyLocksParams struct {
	// Paths are the numbers of lock paths (M), Contenders the contenders
	// on each path (N).
	Paths      []int
	Contenders int
	// Duration is the contention time per variant and M, split into
	// Rounds rounds taken in turns by the variants.
	Duration time.Duration
	Rounds   int
}

// FindMany returns the many-locks run of variant with m paths.
func (r *Report) FindMany(variant string, m int) (Result, bool) {
	for _, x := range r.ManyLocks {
		if x.Variant == variant && x.Paths == m {
			return x, true
		}
	}
	return Result{}, false
}

// manyPaths lists the Ms of the many-locks runs, in order.
func (r *Report) manyPaths() []int {
	var ms []int
	for _, x := range r.ManyLocks {
		if !slices.Contains(ms, x.Paths) {
			ms = append(ms, x.Paths)
		}
	}
	slices.Sort(ms)
	return ms
}

// manyVariants lists the variants of the many-locks runs, sequential
// first, then in the registry's order.
func (r *Report) manyVariants() []string {
	var vs []string
	for _, name := range AllNames() {
		for _, x := range r.ManyLocks {
			if x.Variant == name && !slices.Contains(vs, name) {
				vs = append(vs, name)
			}
		}
	}
	slices.SortStableFunc(vs, func(a, b string) int {
		switch {
		case a == "sequential" && b != "sequential":
			return -1
		case b == "sequential" && a != "sequential":
			return 1
		}
		return 0
	})
	return vs
}

// CompareMany is the paired ratio of fig between variants a and b at m
// paths, round i over round i.
func (r *Report) CompareMany(a, b string, m int, fig Figure) (Estimate, bool) {
	ra, okA := r.FindMany(a, m)
	rb, okB := r.FindMany(b, m)
	if !okA || !okB {
		return Estimate{}, false
	}
	return PairedRatio(ra.roundValues(fig), rb.roundValues(fig)), true
}

// halfCeiling is acq/s over the ceiling's half, the most a queue lock's
// acquisitions (two writes each: create and delete) can reach together:
// each round's throughput over it, median and interval; N is 0 without a
// ceiling.
func (r *Report) halfCeiling(x Result) Estimate {
	if r.Ceiling == nil || r.Ceiling.WritesPerSec <= 0 {
		return Estimate{}
	}
	return x.Estimate(FigThroughput).Scale(2 / r.Ceiling.WritesPerSec)
}

// manyColumns are the many-locks table's columns.
func (r *Report) manyColumns() []column {
	return []column{
		{"variant", func(x Result) string { return x.Variant }},
		{"M paths", func(x Result) string { return fmt.Sprint(x.Paths) }},
		{"N each", func(x Result) string { return fmt.Sprint(x.Contenders) }},
		{"sessions", func(x Result) string { return fmt.Sprint(x.Paths * x.Contenders) }},
		{"acq/s [95% CI]", func(x Result) string { return estStr(x.Estimate(FigThroughput)) }},
		{"acq/s / (ceiling/2) [95% CI]", func(x Result) string { return estStr(r.halfCeiling(x)) }},
		{"writes/acq", func(x Result) string { return fmt.Sprintf("%.2f", x.WritesPerAcquisition()) }},
		{"of ceiling", func(x Result) string { return fractionStr(r.Ceiling.FractionOf(x)) }},
		{"acquire p50 ms [95% CI]", func(x Result) string { return estStr(x.Estimate(FigAcquireP50)) }},
		{"acquire p99 ms [95% CI]", func(x Result) string { return estStr(x.Estimate(FigAcquireP99)) }},
		{"pkts in/acq", func(x Result) string { return fmt.Sprintf("%.2f", x.PacketsPerAcquisition()) }},
		{"client CPU µs/acq", clientSide(func(x Result) string {
			if x.ClientCPU <= 0 || x.Acquisitions == 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f", float64(x.ClientCPU.Microseconds())/float64(x.Acquisitions))
		})},
	}
}

// sortedMany is the many-locks runs by variant, then M.
func (r *Report) sortedMany() []Result {
	vs := r.manyVariants()
	out := slices.Clone(r.ManyLocks)
	slices.SortStableFunc(out, func(a, b Result) int {
		if d := slices.Index(vs, a.Variant) - slices.Index(vs, b.Variant); d != 0 {
			return d
		}
		return a.Paths - b.Paths
	})
	return out
}

// manyComparisons is sequential over each other variant at every M, for
// fig: the heading and the rows.
func (r *Report) manyComparisons(fig Figure, noDiff string) (head []string, rows [][]string) {
	others := slices.DeleteFunc(r.manyVariants(), func(v string) bool { return v == "sequential" })
	if len(others) == 0 {
		return nil, nil
	}
	head = append([]string{"M"}, others...)
	for _, m := range r.manyPaths() {
		row := []string{fmt.Sprint(m)}
		for _, o := range others {
			e, ok := r.CompareMany("sequential", o, m, fig)
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, ratioEst(e, noDiff))
		}
		rows = append(rows, row)
	}
	return head, rows
}

// ManyLocksTarget says, for the largest M, whether sequential's aggregate
// is within 15% of the ceiling's half and not below any peer outside the
// interval: issue 42's target, checked on the figures of the run.
func (r *Report) ManyLocksTarget() string {
	ms := r.manyPaths()
	if len(ms) == 0 {
		return ""
	}
	m := ms[len(ms)-1]
	seq, ok := r.FindMany("sequential", m)
	if !ok {
		return ""
	}
	var parts []string
	if h := r.halfCeiling(seq); h.N > 0 {
		verdict := "within 15% of it"
		if h.Median < 0.85 {
			verdict = "short of the 0.85 the target asks"
		}
		parts = append(parts, fmt.Sprintf("at M = %d (%d sessions) sequential takes %s acq/s, %s of the ceiling's half (%.0f acq/s at 2 writes each): %s",
			m, m*seq.Contenders, sig3(seq.Estimate(FigThroughput).Median), estStr(h), r.Ceiling.WritesPerSec/2, verdict))
	}
	for _, o := range r.manyVariants() {
		if o == "sequential" {
			continue
		}
		e, ok := r.CompareMany("sequential", o, m, FigThroughput)
		if !ok || e.N == 0 {
			continue
		}
		switch {
		case e.HasInterval() && e.Hi < 1:
			parts = append(parts, fmt.Sprintf("below %s outside the interval (%s)", o, ratioEst(e, "")))
		case e.HasInterval() && e.Lo > 1:
			parts = append(parts, fmt.Sprintf("above %s (%s)", o, ratioEst(e, "")))
		default:
			parts = append(parts, fmt.Sprintf("level with %s (%s)", o, ratioEst(e, "no difference")))
		}
	}
	return strings.Join(parts, "; ")
}

// WriteManyLocks writes the many-locks section: the runs, sequential over
// each peer paired by round, and the target, in markdown or, with md
// false, as text for the terminal's summary (the table's main columns).
func (r *Report) WriteManyLocks(w io.Writer, md bool) error {
	if len(r.ManyLocks) == 0 {
		return nil
	}
	p := r.ManyParams
	cols := r.manyColumns()
	if md {
		heads := make([]string, len(cols))
		seps := make([]string, len(cols))
		for i, c := range cols {
			heads[i], seps[i] = c.head, "---:"
		}
		seps[0] = "---"
		fmt.Fprintf(w, "| %s |\n| %s |\n", strings.Join(heads, " | "), strings.Join(seps, " | "))
		for _, x := range r.sortedMany() {
			cells := make([]string, len(cols))
			for i, c := range cols {
				cells[i] = c.cell(x)
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
		fmt.Fprintln(w)
		for _, fig := range []Figure{FigThroughput, FigAcquireP99} {
			head, rows := r.manyComparisons(fig, "no difference")
			if len(rows) == 0 {
				continue
			}
			better := "above 1: sequential takes more"
			if fig.Lower() {
				better = "below 1: sequential waits less"
			}
			fmt.Fprintf(w, "%s, sequential over the other lock at each M, paired by round (%s):\n\n| %s |\n|%s\n",
				capitalize(fig.String()), better, strings.Join(head, " | "), strings.Repeat("---:|", len(head)))
			for _, row := range rows {
				fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
			}
			fmt.Fprintln(w)
		}
		if t := r.ManyLocksTarget(); t != "" {
			fmt.Fprintf(w, "Target (sequential's aggregate at the largest M within 15%% of the ceiling's half, not below any peer outside its interval): %s.\n", t)
		}
		return nil
	}
	// The terminal: 100 columns.
	short := []int{0, 1, 3, 4, 5, 9}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	heads := []string{"variant", "M", "sessions", "acq/s [95% CI]", "/(ceil/2)", "acquire p99 ms"}
	fmt.Fprintln(tw, strings.Join(heads, "\t")+"\t")
	for _, x := range r.sortedMany() {
		cells := make([]string, len(short))
		for i, k := range short {
			cells[i] = cols[k].cell(x)
		}
		if h := r.halfCeiling(x); h.N > 0 {
			cells[4] = sig3(h.Median)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "Many locks at once: M paths x N = %d contenders each, %v per variant and M in %d rounds.\n",
		p.Contenders, p.Duration, p.Rounds)
	if err := trimmed(w, b.String()); err != nil {
		return err
	}
	head, rows := r.manyComparisons(FigThroughput, "no diff")
	if len(rows) > 0 {
		fmt.Fprintln(w, "acq/s, sequential over the other lock at each M, paired rounds [95% CI]:")
		var c strings.Builder
		tw := tabwriter.NewWriter(&c, 0, 0, 3, ' ', 0)
		fmt.Fprintln(tw, "  "+strings.Join(head, "\t")+"\t")
		for _, row := range rows {
			fmt.Fprintln(tw, "  "+strings.Join(row, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := trimmed(w, c.String()); err != nil {
			return err
		}
	}
	if t := r.ManyLocksTarget(); t != "" {
		for _, l := range wrap("Target: "+t+".", SummaryWidth, "  ") {
			fmt.Fprintln(w, l)
		}
	}
	return nil
}

// WriteManyLocksMarkdown writes many-locks.md: the section alone, with
// how it was run and the ceiling it is measured against.
func (r *Report) WriteManyLocksMarkdown(w io.Writer) error {
	p := r.ManyParams
	e := r.Env
	fmt.Fprintf(w, "# Many locks at once\n\n")
	fmt.Fprintf(w, "Generated by `zklocks bench`; do not edit by hand. Command: `%s`, %s, ZooKeeper %s (%d members, fsync %s, tick %v), %d CPUs (%s).\n\n",
		e.Command, e.Date.UTC().Format(time.RFC3339), e.ZooKeeperVersion, e.Members, onOff(e.ForceSync), e.TickTime, e.CPUs, e.CPUModel)
	fmt.Fprintf(w, "M independent lock paths, N = %d contenders on each (a session each, round-robin over the members: M x N sessions), "+
		"no critical section and no idle time; %v per variant and M in %d rounds taken in turns by the variants. "+
		"acq/s is every path's acquisitions together over a round's wall time; the figures marked [95%% CI] are the median of the rounds with its %s; "+
		"the comparisons pair round i of sequential with round i of the other lock.\n\n",
		p.Contenders, p.Duration, p.Rounds, r.intervalPhraseMany())
	if c := r.Ceiling; c != nil && c.WritesPerSec > 0 {
		fmt.Fprintf(w, "Measured against the ensemble's quorum-write ceiling of the same run: %s%.0f writes/s (%d sessions, %d requests outstanding each, the leader's `zk_proposal_count`). "+
			"A queue lock's acquisition is two writes (its create and its delete), so **acq/s / (ceiling/2)** is the share of the most acquisitions the ensemble could take; "+
			"**of ceiling** is acq/s x the run's own writes/acq over the ceiling.\n\n", c.atLeast(), c.WritesPerSec, c.Sessions, c.Window)
	}
	return r.WriteManyLocks(w, true)
}

// intervalPhraseMany names the many-locks runs' intervals.
func (r *Report) intervalPhraseMany() string {
	k := 0
	for _, x := range r.ManyLocks {
		k = max(k, len(x.PerRound))
	}
	if _, level := orderIndex(max(k, 1), ConfidenceLevel); level >= ConfidenceLevel {
		return "95% confidence interval (order statistics)"
	} else if math.IsNaN(level) {
		return "interval"
	} else {
		return fmt.Sprintf("range over the %d rounds (it holds the median with probability %.1f%%)", k, 100*level)
	}
}
