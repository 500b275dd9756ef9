package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zklocks/zklocks/internal/history"
)

// syntheticReport is a report with made-up figures, for the tests that
// need no ZooKeeper.
func syntheticReport() *Report {
	rep := &Report{Env: LocalEnv()}
	rep.Env.ZooKeeperVersion = "3.8.0"
	on := true
	rep.Env.ForceSync = &on
	rep.Env.TickTime = 200 * time.Millisecond
	rep.Env.Duration = 3 * time.Second
	rep.Env.Rounds = 6
	rep.Floors = Floors{
		CreateDelete: Latency{Count: 10, P50: 4 * time.Millisecond, P99: 8 * time.Millisecond},
		Notify:       Latency{Count: 10, P50: 2 * time.Millisecond, P99: 5 * time.Millisecond},
		Samples:      10,
	}
	for vi, v := range []string{"naive", "sequential", "zk-peer", "curator", "kazoo"} {
		for _, n := range []int{1, 2, 4, 8, 16, 32, 64} {
			acq := int64(300)
			herd := int64(0)
			if v == "naive" {
				herd = acq * int64(n-1)
			} else if n > 1 {
				herd = acq
			}
			r := Result{
				Variant: v, Contenders: n, Acquisitions: acq, Holds: int(acq),
				Elapsed: time.Duration(vi+1) * time.Duration(n) * 100 * time.Millisecond,
				Acquire: Latency{Count: acq, P50: time.Duration(n) * time.Millisecond, P99: time.Duration(n) * 3 * time.Millisecond},
				Server:  ServerCounts{WatchersFired: herd, Proposals: 2*acq + herd, PacketsReceived: 5 * acq},
				Floors:  rep.Floors,
			}
			if n > 1 {
				r.Handoff = Latency{Count: acq - 1, P50: time.Duration(2+vi) * time.Millisecond, P99: time.Duration(5+vi*n) * time.Millisecond}
			}
			r.External = v == "curator" || v == "kazoo"
			r.PerRound = syntheticRounds(r, rep.Env.Rounds)
			rep.Results = append(rep.Results, r)
		}
	}
	rep.Reentry = []ReentryResult{{Variant: "reentrant-memory", Reentries: 100, Latency: Latency{P50: 2 * time.Microsecond}}}
	return rep
}

// syntheticRounds splits r into k rounds whose figures swing by up to
// 25% around r's, the same way for every variant (the machine's load).
func syntheticRounds(r Result, k int) []RoundFigures {
	out := make([]RoundFigures, k)
	for i := range out {
		f := 1 + 0.25*math.Sin(float64(3*i+r.Contenders))
		out[i] = RoundFigures{Acquisitions: r.Acquisitions / int64(k), Elapsed: time.Duration(float64(r.Elapsed) / float64(k) * f),
			AcquireP50: time.Duration(float64(r.Acquire.P50) * f), HandoffP50: time.Duration(float64(r.Handoff.P50) * f),
			HandoffP99: time.Duration(float64(r.Handoff.P99) * f)}
	}
	return out
}

func TestReportOutputs(t *testing.T) {
	rep := syntheticReport()
	dir := t.TempDir()
	if d := os.Getenv("BENCH_FIGURES_DIR"); d != "" {
		dir = d // to look at the figures
	}
	files, err := rep.WriteFigures(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(figureFiles) {
		t.Fatalf("wrote %d figures, README links %d", len(files), len(figureFiles))
	}
	for i, f := range files {
		if filepath.Base(f) != figureFiles[i].file {
			t.Errorf("figure %d is %s, README links %s", i, filepath.Base(f), figureFiles[i].file)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("sequential")) {
			t.Errorf("%s: not an SVG with a legend", f)
		}
	}
	var md, table, txt bytes.Buffer
	if err := rep.WriteMarkdown(&md, 16); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| fsync (forceSync) | on |", "| tick time | 200ms |", "3.8.0", "zk_sum_node_deleted_watch_count",
		"zk_proposal_count", "| sequential | 16 |", "watchers.svg", "## Re-entry"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteBenchfmt(&txt); err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, l := range strings.Split(txt.String(), "\n") {
		if !strings.HasPrefix(l, "BenchmarkLock/") {
			continue
		}
		lines++
		f := strings.Split(l, "\t")
		if len(f) < 4 || !strings.HasSuffix(f[2], " ns/op") || strings.Contains(l, "e+") {
			t.Errorf("not a benchmark line benchstat reads well: %q", l)
		}
	}
	if lines != len(rep.Results) {
		t.Errorf("%d benchmark lines for %d runs", lines, len(rep.Results))
	}
	h := rep.Headline(16)
	if !h.HaveSeq || len(h.Peers) != 3 || math.Abs(h.SeqHandoffFloor.Median-1.5) > 0.1 {
		t.Errorf("headline %+v", h)
	}
	// The synthetic rounds swing alike for every variant: paired, the
	// ratio is exact (throughput: sequential 3/2 of the peer's time).
	if c := h.Peers[0]; math.Abs(c.Throughput.Median-1.5) > 0.01 || c.Throughput.Hi-c.Throughput.Lo > 0.01 {
		t.Errorf("sequential over zk-peer throughput %+v, want 1.5 with a narrow interval", c.Throughput)
	}
}

// Every line zklocks bench prints on stdout fits in 100 columns.
func TestSummaryFitsTerminal(t *testing.T) {
	rep := syntheticReport()
	rep.Env.Skipped = []string{"kazoo: /usr/bin/python3 cannot import kazoo: not installed (" + PeersInstallHint + ")"}
	var b bytes.Buffer
	if err := rep.WriteSummary(&b, 16); err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > SummaryWidth {
			t.Errorf("line %d has %d columns: %q", i+1, n, l)
		}
	}
	for _, want := range []string{"acq/s [95% CI]", "zk-peer", "curator", "kazoo", "no diff", "not run: kazoo"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	t.Logf("summary:\n%s", b.String())
}

func TestCheckHistory(t *testing.T) {
	ok := []Hold{{0, 1, 2, 10, false, false}, {1, 2, 3, 11, false, false}, {0, 5, 6, 12, false, false}}
	if err := CheckHistory(ok, 1); err != nil {
		t.Fatalf("clean history: %v", err)
	}
	overlap := []Hold{{0, 1, 3, 10, false, false}, {1, 2, 4, 11, false, false}}
	if err := CheckHistory(overlap, 1); err == nil {
		t.Fatal("overlap not caught")
	}
	stale := []Hold{{0, 1, 2, 11, false, false}, {1, 3, 4, 10, false, false}}
	if err := CheckHistory(stale, 1); err == nil {
		t.Fatal("token going back not caught")
	}
	noTokens := []Hold{{0, 1, 2, 0, false, false}, {1, 3, 4, 0, false, false}}
	if err := CheckHistory(noTokens, 1); err != nil {
		t.Fatalf("a lock without tokens: %v", err)
	}
	lost := []Hold{{0, 1, 5, 10, true, false}, {1, 2, 3, 11, false, false}}
	if err := CheckHistory(lost, 1); err != nil {
		t.Fatalf("a hold reported lost is not checked: %v", err)
	}
	readers := []Hold{{0, 1, 5, 10, false, true}, {1, 2, 6, 11, false, true}, {2, 7, 8, 12, false, false}}
	if err := CheckHistory(readers, 1); err != nil {
		t.Fatalf("readers sharing, then a writer: %v", err)
	}
	writerAmongReaders := []Hold{{0, 1, 5, 10, false, true}, {1, 2, 6, 11, false, false}}
	if err := CheckHistory(writerAmongReaders, 1); err == nil {
		t.Fatal("a writer overlapping a reader not caught")
	}
}

// With permits, up to that many holds may be open at once, and no more.
func TestCheckHistoryWithPermits(t *testing.T) {
	ms := time.Millisecond
	two := []Hold{{Contender: 0, Enter: 0, Exit: 5 * ms}, {Contender: 1, Enter: ms, Exit: 6 * ms}}
	if err := CheckHistory(two, 2); err != nil {
		t.Errorf("two holds of two permits: %v", err)
	}
	if err := CheckHistory(two, 1); !errors.Is(err, ErrMutualExclusion) {
		t.Errorf("two holds of one permit: %v, want ErrMutualExclusion", err)
	}
	three := append(two, Hold{Contender: 2, Enter: 2 * ms, Exit: 3 * ms})
	if err := CheckHistory(three, 2); !errors.Is(err, ErrMutualExclusion) || !errors.Is(err, history.ErrTooMany) {
		t.Errorf("three holds of two permits: %v, want ErrMutualExclusion and history.ErrTooMany", err)
	}
}

func TestMerge(t *testing.T) {
	mk := func(acq int64, lat time.Duration) Result {
		h := &runHists{newHistogram(), newHistogram(), newHistogram(), newHistogram(), newHistogram()}
		for range acq {
			h.acquire.record(lat)
			h.handoff.record(lat)
		}
		r := Result{Variant: "sequential", Contenders: 4, Acquisitions: acq, Holds: int(acq), Elapsed: time.Second, Rounds: 1,
			Server: ServerCounts{WatchersFired: acq, Proposals: 2 * acq, WatchersByType: map[string]int64{"zk_sum_node_deleted_watch_count": acq}},
			hists:  h}
		r.summarize()
		return r
	}
	a, b := mk(100, time.Millisecond), mk(300, 3*time.Millisecond)
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Acquisitions != 400 || a.Elapsed != 2*time.Second || a.Rounds != 2 || a.WritesPerAcquisition() != 2 {
		t.Errorf("merged counts: %+v", a)
	}
	if a.Handoff.Count != 400 || a.Handoff.P50 < 2*time.Millisecond {
		t.Errorf("merged histogram: %+v", a.Handoff)
	}
	other := mk(1, time.Millisecond)
	other.Contenders = 8
	if err := a.Merge(other); err == nil {
		t.Error("merged runs of different N")
	}
}

// A run at one N only (zklocks bench -n 1) has nothing to draw on some
// figures (no handoff, no watcher woken): they come out empty, not as a
// panic of the plotting library's log axes.
func TestFiguresOfASingleN(t *testing.T) {
	rep := syntheticReport()
	var one []Result
	for _, r := range rep.Results {
		if r.Contenders == 1 {
			one = append(one, r)
		}
	}
	rep.Results = one
	files, err := rep.WriteFigures(t.TempDir())
	if err != nil {
		t.Fatalf("WriteFigures with N = 1 only: %v", err)
	}
	if len(files) == 0 {
		t.Error("no figures written")
	}
}

// A results.json keeps the rounds, so that -render gives the same
// intervals; one written before rounds were kept still renders, with
// whole-run figures and no intervals.
func TestRenderFromJSON(t *testing.T) {
	rep := syntheticReport()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got, want := back.Headline(16).Peers[1].Throughput, rep.Headline(16).Peers[1].Throughput; got != want {
		t.Errorf("after JSON: %+v, before: %+v", got, want)
	}
	for i := range back.Results {
		back.Results[i].PerRound = nil
		back.Results[i].External = false
	}
	var md, sum bytes.Buffer
	if err := back.WriteMarkdown(&md, 16); err != nil {
		t.Fatal(err)
	}
	if err := back.WriteSummary(&sum, 16); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "no pairing and no interval") || regexp.MustCompile(`\[[0-9.]+-|95%`).MatchString(sum.String()) {
		t.Errorf("old results: intervals shown or not said to be missing:\n%s", sum.String())
	}
	if _, err := back.WriteFigures(t.TempDir()); err != nil {
		t.Errorf("figures of old results: %v", err)
	}
}
