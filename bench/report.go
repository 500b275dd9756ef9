package bench

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Env describes where and how a set of runs was made; every report
// carries it beside the figures.
type Env struct {
	ZooKeeperVersion string
	// Members is the ensemble's size.
	Members int
	// External is true when the ensemble came from ZK_SERVERS; ForceSync
	// and TickTime are then what the caller says (unknown: nil / 0).
	External  bool
	ForceSync *bool
	TickTime  time.Duration
	GoVersion string
	GOOS      string
	GOARCH    string
	CPUs      int
	CPUModel  string
	Date      time.Time
	Command   string
	// Duration or Acquisitions per run, Hold and Reentries, as asked.
	Duration     time.Duration
	Acquisitions int
	Hold         time.Duration
	Idle         time.Duration
	Reentries    int
	// Lease is the timeout variant's hold lease.
	Lease time.Duration
	// Rounds is the number of rounds each run was split into, taken in
	// turns by the variants.
	Rounds int
	// Skipped says which variants were not run, and why (a peer whose
	// client is not installed).
	Skipped []string `json:",omitempty"`
}

// LocalEnv fills the fields that describe this process and machine.
func LocalEnv() Env {
	return Env{
		GoVersion: runtime.Version(),
		GOOS:      runtime.GOOS,
		GOARCH:    runtime.GOARCH,
		CPUs:      runtime.NumCPU(),
		CPUModel:  cpuModel(),
		Date:      time.Now(),
	}
}

// Report is a whole bench: every run of every variant, in one ensemble.
type Report struct {
	Env    Env
	Floors Floors
	// Ceiling is the ensemble's quorum-write ceiling (MeasureCeiling),
	// nil when it was not measured.
	Ceiling *Ceiling `json:",omitempty"`
	// Price is what sequential's token read and watch cost on bare
	// connections (MeasurePrice), nil when it was not measured.
	Price   *Price
	Results []Result
	// ManyLocks are the runs of many locks at once (Result.Paths paths
	// of Result.Contenders contenders each), ManyParams how they were run.
	ManyLocks  []Result        `json:",omitempty"`
	ManyParams ManyLocksParams `json:",omitempty"`
	Reentry    []ReentryResult
	// HoldCost is what holding many locks idle on one session costs
	// (MeasureHoldCost), one row per variant and count.
	HoldCost []HoldCostResult
	// ReentryBench is the output of reentrant's BenchmarkReentry, when
	// make bench has run it (docs/results/reentry.txt).
	ReentryBench string
}

// variants returns the variants present, in the progression's order.
func (r *Report) variants() []string {
	seen := map[string]bool{}
	for _, x := range r.Results {
		seen[x.Variant] = true
	}
	var out []string
	for _, n := range append(slices.Clone(order), r.extraVariants()...) {
		if seen[n] && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func (r *Report) extraVariants() []string {
	var out []string
	for _, x := range r.Results {
		if !slices.Contains(order, x.Variant) && !slices.Contains(out, x.Variant) {
			out = append(out, x.Variant)
		}
	}
	return out
}

func (r *Report) contenders() []int {
	var out []int
	for _, x := range r.Results {
		if !slices.Contains(out, x.Contenders) {
			out = append(out, x.Contenders)
		}
	}
	slices.Sort(out)
	return out
}

// Find returns the run of variant with n contenders.
func (r *Report) Find(variant string, n int) (Result, bool) {
	for _, x := range r.Results {
		if x.Variant == variant && x.Contenders == n {
			return x, true
		}
	}
	return Result{}, false
}

func ms(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}

func ratioStr(x float64) string {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x)
}

// column is one column of the results table.
type column struct {
	head string
	cell func(Result) string
}

var columns = []column{
	{"variant", func(r Result) string { return r.Variant }},
	{"N", func(r Result) string { return fmt.Sprint(r.Contenders) }},
	{"acq", func(r Result) string { return fmt.Sprint(r.Acquisitions) }},
	{"acq/s [95% CI]", func(r Result) string { return estStr(r.Estimate(FigThroughput)) }},
	{"acquire p50 ms [95% CI]", func(r Result) string { return estStr(r.Estimate(FigAcquireP50)) }},
	{"acquire p99 ms", func(r Result) string { return ms(r.Acquire.P99) }},
	{"handoff p50 ms [95% CI]", func(r Result) string { return estStr(r.Estimate(FigHandoffP50)) }},
	{"handoff p99 ms [95% CI]", func(r Result) string { return estStr(r.Estimate(FigHandoffP99)) }},
	{"handoff max ms", func(r Result) string { return ms(r.Handoff.Max) }},
	{"floor p50 ms [95% CI]", func(r Result) string { return estStr(r.Estimate(FigFloorP50)) }},
	{"handoff/floor [95% CI]", func(r Result) string { return ratioEst(r.Estimate(FigHandoffFloor), "") }},
	{"release / server / wake p50 ms", func(r Result) string {
		if r.HandoffServer.Count == 0 {
			return "-"
		}
		return fmt.Sprintf("%s / %s / %s", msOrMicro(r.HandoffRelease.P50), ms(r.HandoffServer.P50), msOrMicro(r.HandoffWake.P50))
	}},
	{"cycle/floor", func(r Result) string { return ratioStr(r.CycleFloorRatio()) }},
	{"watchers/release", func(r Result) string { return fmt.Sprintf("%.2f", r.WatchersPerRelease()) }},
	{"on delete/release", func(r Result) string { return fmt.Sprintf("%.2f", r.WakeupsOnDeletePerRelease()) }},
	{"self/release", clientSide(func(r Result) string { return fmt.Sprintf("%.2f", r.SelfWatchesPerRelease()) })},
	{"writes/acq", func(r Result) string { return fmt.Sprintf("%.2f", r.WritesPerAcquisition()) }},
	{"notif/acq", clientSide(func(r Result) string { return fmt.Sprintf("%.2f", r.NotificationsPerAcquisition()) })},
	{"req/acq", func(r Result) string {
		if r.LockStats == nil || r.Acquisitions == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", r.per(r.LockStats.Requests))
	}},
	{"pkts in/acq", func(r Result) string { return fmt.Sprintf("%.2f", r.PacketsPerAcquisition()) }},
	{"client CPU µs/acq", clientSide(func(r Result) string {
		if r.ClientCPU <= 0 || r.Acquisitions == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f", float64(r.ClientCPU.Microseconds())/float64(r.Acquisitions))
	})},
	{"client CPU µs/pkt", clientSide(func(r Result) string {
		if pk := r.Server.PacketsReceived + r.Server.PacketsSent; r.ClientCPU > 0 && pk > 0 {
			return fmt.Sprintf("%.1f", float64(r.ClientCPU.Microseconds())/float64(pk))
		}
		return "-"
	})},
	{"lost", func(r Result) string { return fmt.Sprint(r.LostHolds) }},
}

// clientSide is a cell of a count seen on the Go client's wire, which a
// peer run by a driver in a child process does not share: "-" for it.
func clientSide(cell func(Result) string) func(Result) string {
	return func(r Result) string {
		if r.External {
			return "-"
		}
		return cell(r)
	}
}

func (r *Report) sortedResults() []Result {
	vs := r.variants()
	out := slices.Clone(r.Results)
	slices.SortStableFunc(out, func(a, b Result) int {
		if d := slices.Index(vs, a.Variant) - slices.Index(vs, b.Variant); d != 0 {
			return d
		}
		return a.Contenders - b.Contenders
	})
	return out
}

// WriteTable prints the side-by-side table for a terminal.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	columns := r.withCeiling(columns, "of ceiling")
	heads := make([]string, len(columns))
	for i, c := range columns {
		heads[i] = c.head
	}
	fmt.Fprintln(tw, strings.Join(heads, "\t")+"\t")
	prev := ""
	for _, x := range r.sortedResults() {
		if prev != "" && x.Variant != prev {
			fmt.Fprintln(tw, strings.Repeat("\t", len(columns)))
		}
		prev = x.Variant
		cells := make([]string, len(columns))
		for i, c := range columns {
			cells[i] = c.cell(x)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	r.writeFloors(w, false)
	if r.Ceiling != nil {
		fmt.Fprintln(w)
		r.writeCeiling(w, false)
	}
	if len(r.Reentry) > 0 {
		fmt.Fprintln(w)
		r.writeReentryTable(w, false)
	}
	if len(r.HoldCost) > 0 {
		fmt.Fprintln(w)
		r.writeHoldCostTable(w, false)
	}
	return nil
}

// WriteBenchfmt writes the runs in the Go benchmark format, so that
// benchstat can compare two bench.txt files.
func (r *Report) WriteBenchfmt(w io.Writer) error {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: github.com/zklocks/zklocks/bench\n", r.Env.GOOS, r.Env.GOARCH)
	if r.Env.CPUModel != "" {
		fmt.Fprintf(w, "cpu: %s\n", r.Env.CPUModel)
	}
	fmt.Fprintf(w, "zookeeper: %s\nfsync: %s\n", r.Env.ZooKeeperVersion, onOff(r.Env.ForceSync))
	procs := runtime.GOMAXPROCS(0)
	for _, x := range r.sortedResults() {
		m := &lineMetrics{}
		ReportMetrics(m, x)
		nsPerOp := 0.0
		if x.Acquisitions > 0 {
			nsPerOp = float64(x.Elapsed) / float64(x.Acquisitions)
		}
		fmt.Fprintf(w, "BenchmarkLock/variant=%s/contenders=%d-%d\t%d\t%.0f ns/op%s\n",
			x.Variant, x.Contenders, procs, x.Acquisitions, nsPerOp, m.String())
	}
	for _, x := range r.Reentry {
		fmt.Fprintf(w, "BenchmarkReentry/variant=%s-%d\t%d\t%.0f ns/op\t%.3f writes/reentry\n",
			x.Variant, procs, x.Reentries, float64(x.Latency.Mean), x.WritesPerReentry())
	}
	for _, x := range r.HoldCost {
		units, mem := "goroutines", "heap-B/lock"
		if x.Driver { // another process's threads and resident memory: not the same units
			units, mem = "threads", "rss-B/lock"
		}
		fmt.Fprintf(w, "BenchmarkHoldIdle/variant=%s/held=%d-%d\t1\t%.0f ns/op\t%.2f packets/s\t%.3f cpu-ms/s\t%d %s\t%.0f %s\n",
			x.Variant, x.Held, procs, float64(x.Idle), x.PacketsPerSec, float64(x.CPUPerSec)/float64(time.Millisecond), x.Goroutines, units, x.HeapPerLock, mem)
	}
	return nil
}

type lineMetrics struct{ parts []string }

func (m *lineMetrics) ReportMetric(n float64, unit string) {
	v := strconv.FormatFloat(n, 'f', -1, 64)
	if math.Abs(n) >= 1000 || n == math.Trunc(n) {
		v = strconv.FormatFloat(n, 'f', 0, 64)
	} else {
		v = strconv.FormatFloat(n, 'f', 4, 64)
	}
	m.parts = append(m.parts, "\t"+v+" "+unit)
}

func (m *lineMetrics) String() string {
	slices.SortFunc(m.parts, func(a, b string) int {
		return strings.Compare(strings.Fields(a)[1], strings.Fields(b)[1])
	})
	return strings.Join(m.parts, "")
}

func onOff(b *bool) string {
	switch {
	case b == nil:
		return "unknown"
	case *b:
		return "on"
	default:
		return "off"
	}
}

// floorSets returns the distinct floors the runs were compared with, with
// the numbers of contenders of the runs that used each.
func (r *Report) floorSets() ([]Floors, [][]int) {
	var fs []Floors
	var ns [][]int
	for _, x := range r.sortedResultsByN() {
		i := slices.IndexFunc(fs, func(f Floors) bool { return f == x.Floors })
		if i < 0 {
			fs = append(fs, x.Floors)
			ns = append(ns, nil)
			i = len(fs) - 1
		}
		if !slices.Contains(ns[i], x.Contenders) {
			ns[i] = append(ns[i], x.Contenders)
		}
	}
	return fs, ns
}

func (r *Report) sortedResultsByN() []Result {
	out := slices.Clone(r.Results)
	slices.SortStableFunc(out, func(a, b Result) int { return a.Contenders - b.Contenders })
	return out
}

func (r *Report) writeFloors(w io.Writer, md bool) {
	fs, ns := r.floorSets()
	if md {
		fmt.Fprintf(w, "| first round of the runs with N = | samples | create+delete p50 / p99 ms | delete→notification, watcher waiting %v, p50 / p99 ms | same, back to back, p50 / p99 ms |\n|---|---:|---:|---:|---:|\n", WaitGap)
	} else {
		fmt.Fprintf(w, "floors (create+delete; delete->notification with the watcher waiting %v; same back to back), p50/p99 ms:\n", WaitGap)
	}
	for i, f := range fs {
		nsStr := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ns[i])), ", "), "[]")
		if md {
			fmt.Fprintf(w, "| %s | %d | %s / %s | %s / %s | %s / %s |\n", nsStr, f.Samples,
				ms(f.CreateDelete.P50), ms(f.CreateDelete.P99), ms(f.Notify.P50), ms(f.Notify.P99), ms(f.NotifyHot.P50), ms(f.NotifyHot.P99))
		} else {
			fmt.Fprintf(w, "  N=%-10s create+delete %s/%s  notify %s/%s  notify back to back %s/%s\n", nsStr,
				ms(f.CreateDelete.P50), ms(f.CreateDelete.P99), ms(f.Notify.P50), ms(f.Notify.P99), ms(f.NotifyHot.P50), ms(f.NotifyHot.P99))
		}
	}
}
