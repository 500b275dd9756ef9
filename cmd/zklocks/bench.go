package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zklocks/zklocks/bench"
	"github.com/zklocks/zklocks/internal/ensemble"
)

// defaultRounds is -full's -rounds (and zklocks rivals'): the fewest
// rounds whose 95% interval (bench.ConfidenceLevel) leaves out the lowest
// and the highest round, so that one disturbed round (a burst of load on a
// shared machine) does not set a bound; 6 to 8 rounds give [min, max].
const defaultRounds = 9

// The default run is what the headline and the herd figures need, and
// fits a coffee break: sequential and naive at 4, 16 and 64 contenders
// (the herd: whom a release wakes, as the queue grows), the peers
// (go-zookeeper's Lock, Curator, kazoo) at the headline's 16 only, in 21
// rounds of 1 s, more and longer rounds than -full's 9 of 444 ms, so that
// the headline's paired intervals come out narrower than the whole
// grid's (15 rounds of 800 ms left kazoo's acquire p50 interval as wide
// as the committed run's). No price, no hold cost, no other variant.
const (
	quickVariants = "sequential,naive,zk-peer,curator,kazoo"
	quickN        = "4,16,64"
	quickDuration = 21 * time.Second
	quickRounds   = 21
)

// The default run's many-locks section: 1 and 16 lock paths of 4
// contenders each, in 9 rounds of 333 ms; -full adds 64 paths (256
// sessions) and 256 paths (1,024 sessions), in 6 rounds of 1 s (an
// acquisition waits 0.5 s at 256 paths: shorter rounds would be mostly
// the drain of the queues).
const (
	quickPaths         = "1,16"
	quickPathsDuration = 3 * time.Second
)

// fullGrid is what -full sets, for each flag not given on the command
// line: the whole grid, every variant at every N with the price and the
// hold cost, as make bench-docs runs it for the committed results.
func fullGrid() map[string]string {
	return map[string]string{
		"variants":       strings.Join(bench.AllNames(), ","),
		"n":              "1,2,4,8,16,32,64",
		"duration":       "4s",
		"rounds":         strconv.Itoa(defaultRounds),
		"headline-only":  "",
		"hold-counts":    "0,1,100,1000,10000",
		"price-samples":  "60",
		"paths":          "1,16,64,256",
		"paths-duration": "6s",
		"paths-rounds":   "6",
	}
}

// defaultOut is where zklocks bench writes its report: a directory git
// ignores, so that a run leaves the checkout clean.
const defaultOut = "results"

func init() {
	register(command{
		name:    "bench",
		summary: "run every lock side by side; write " + defaultOut + "/ (table, figures, bench.txt; -out to choose)",
		run:     runBench,
	})
}

const benchUsage = `usage: zklocks bench [-full] [flags]

Runs locks side by side with N contenders, one session each, on one
ZooKeeper ensemble: a local 3-node ensemble it starts and stops, or
ZK_SERVERS when set. Each run is split into rounds the variants take in
turns; the figures are medians over the rounds with 95% intervals, and
the comparisons pair the rounds.

By default it runs what the headline needs, in about five minutes:
sequential beside go-zookeeper's own Lock, Curator's InterProcessMutex and
kazoo's Lock (each run by a driver of bench/peers in a child process) at
-headline-n contenders, and naive beside sequential at N = 4, 16 and 64
(the herd), in 21 rounds of 1s, then many locks at once: 1 and 16 lock
paths of 4 contenders each (-paths, -paths-n), for sequential, go-zookeeper's
Lock, Curator and kazoo, in 9 rounds of 333ms, the aggregate acq/s against
the ensemble's write ceiling. -full runs the whole grid, as make
bench-docs does (20 to 27 minutes): every lock (naive, sequential,
reentrant in both count modes, timeout, rwlock, semaphore, multilock,
election and the peers' counterparts) at N = 1 to 64 in 9 rounds of
444ms, many locks at 1, 16, 64 and 256 paths (up to 1,024 sessions, 6
rounds of 1s), the
token's price, re-entry and the hold cost. Flags given on the
command line apply either way. It prints its plan first, and the time
left as it goes.

Prints a summary in 100 columns and writes README.md, table.txt (the full
table), bench.txt (benchstat format), results.json and SVG figures into
-out. Without Curator or kazoo installed, their rows are left out with a
message (scripts/install-peers.sh installs them); named in -variants,
they fail the run instead.

flags:`

type benchFlags struct {
	variants     string
	variantsSet  bool // -variants given: a peer that cannot run fails the run
	holdSet      bool // -hold-variants given: the same for the hold cost
	ns           string
	duration     time.Duration
	acquisitions int
	rounds       int
	hold         time.Duration
	idle         time.Duration
	reentries    int
	reentrySamp  int
	holdCounts   string
	holdIdle     time.Duration
	holdVariants string
	fsync        bool
	tick         time.Duration
	floorSamples int
	priceSamples int
	ceiling      time.Duration
	out          string
	headlineN    int
	progress     bool
	cpuprofile   string
	render       string
	full         bool
	headlineOnly string
	// The many-locks section: -paths (M), -paths-n, -paths-variants,
	// -paths-duration, -paths-rounds.
	paths         string
	pathsN        int
	pathsVariants string
	// -paths-variants given: a peer that cannot run fails the run.
	pathsVariantsSet bool
	pathsDuration    time.Duration
	pathsRounds      int
}

// fullGridText lists what -full sets, for its usage line.
func fullGridText() string {
	g := fullGrid()
	var out []string
	for _, name := range []string{"variants", "n", "duration", "rounds", "headline-only", "hold-counts", "price-samples", "paths", "paths-duration", "paths-rounds"} {
		v := g[name]
		switch {
		case name == "variants":
			v = "(every variant)"
		case v == "":
			v = "''"
		}
		out = append(out, "-"+name+" "+v)
	}
	return strings.Join(out, ", ")
}

func parseBenchFlags(args []string, stderr io.Writer) (benchFlags, error) {
	var f benchFlags
	fs := flag.NewFlagSet("zklocks bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, benchUsage); fs.PrintDefaults() }
	fs.BoolVar(&f.full, "full", false, "run the whole grid, as make bench-docs does; for each flag not given: "+fullGridText())
	fs.StringVar(&f.variants, "variants", quickVariants, "comma-separated variants to run")
	fs.StringVar(&f.ns, "n", quickN, "comma-separated numbers of contenders (empty with -paths: the many-locks runs alone)")
	fs.StringVar(&f.headlineOnly, "headline-only", strings.Join(bench.Peers, ","), "variants run at -headline-n only (at every -n when -n leaves -headline-n out)")
	fs.DurationVar(&f.duration, "duration", quickDuration, "contention time per variant and N, split into -rounds rounds (ignored with -acquisitions)")
	fs.IntVar(&f.acquisitions, "acquisitions", 0, "acquisitions per run instead of a duration")
	fs.IntVar(&f.rounds, "rounds", quickRounds, "split each run into this many rounds, taken in turns by the variants; medians and 95% intervals over them (6 or more for 95%)")
	fs.DurationVar(&f.hold, "hold", 0, "critical section: how long each holder keeps the lock")
	fs.IntVar(&f.reentries, "reentries", 1, "nested Lock/Unlock pairs per hold, for re-entrant variants (shows the count modes' cost)")
	fs.IntVar(&f.reentrySamp, "reentry-samples", 200, "re-entries measured on their own per re-entrant variant (0: skip)")
	fs.StringVar(&f.holdCounts, "hold-counts", "", "numbers of locks held idle on one session whose cost is measured; 0 is the session alone (empty: skip)")
	fs.DurationVar(&f.holdIdle, "hold-idle", 10*time.Second, "idle window measured for each -hold-counts")
	fs.StringVar(&f.holdVariants, "hold-variants", "sequential,zk-peer,curator,kazoo", "variants whose hold cost is measured (a peer that is not installed is left out)")
	fs.BoolVar(&f.fsync, "fsync", true, "local ensemble: fsync the transaction log before acknowledging (forceSync)")
	fs.DurationVar(&f.tick, "tick", 200*time.Millisecond, "local ensemble: ZooKeeper tick time")
	fs.IntVar(&f.floorSamples, "floor-samples", 80, "floor samples per N, spread over its rounds (at least 20 a round: each round measures its own floors)")
	fs.IntVar(&f.priceSamples, "price-samples", 0, "samples per round of each request pattern of the token's and Done's price, measured once before the runs (0: skip)")
	fs.DurationVar(&f.idle, "idle", 0, "time a contender waits after releasing before it asks again")
	fs.DurationVar(&bench.TimeoutLease, "lease", bench.TimeoutLease, "hold lease of the timeout variant")
	fs.DurationVar(&f.ceiling, "ceiling", 2*time.Second, "window of each step of the quorum-write ceiling (4, 16, 64, then 256 sessions until saturated), measured once before the runs (0: skip)")
	fs.StringVar(&f.out, "out", defaultOut, "directory for README.md, bench.txt and the figures (empty: write nothing; make bench-docs writes docs/results)")
	fs.IntVar(&f.headlineN, "headline-n", 16, "contenders of the headline comparison (sequential vs floor and peer)")
	fs.BoolVar(&f.progress, "progress", true, "show progress on stderr")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the client side (this process) to this file")
	fs.StringVar(&f.paths, "paths", quickPaths, "many locks at once: comma-separated numbers of independent lock paths (M), each with -paths-n contenders (empty: skip)")
	fs.IntVar(&f.pathsN, "paths-n", 4, "contenders on each path of the many-locks runs")
	fs.StringVar(&f.pathsVariants, "paths-variants", strings.Join(bench.ManyLocksVariants, ","), "variants of the many-locks runs (a peer that is not installed is left out)")
	fs.DurationVar(&f.pathsDuration, "paths-duration", quickPathsDuration, "contention time per variant and M of the many-locks runs, split into -paths-rounds rounds")
	fs.IntVar(&f.pathsRounds, "paths-rounds", defaultRounds, "rounds of the many-locks runs, taken in turns by the variants")
	fs.StringVar(&f.render, "render", "", "run nothing: render README.md, bench.txt and the figures into -out from a results.json a run wrote")
	if err := parse(fs, args); err != nil {
		return f, err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	f.variantsSet, f.holdSet, f.pathsVariantsSet = set["variants"], set["hold-variants"], set["paths-variants"]
	if f.full {
		for name, value := range fullGrid() {
			if !set[name] {
				if err := fs.Set(name, value); err != nil {
					return f, err
				}
			}
		}
	}
	return f, nil
}

func parseInts(s string) ([]int, error) { return parseCounts(s, "-n", 1) }

// parseCounts parses flag's comma-separated numbers, each at least least.
func parseCounts(s, flag string, least int) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < least {
			return nil, usageError{fmt.Sprintf("%s: %q is not a number of at least %d", flag, p, least)}
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, usageError{flag + ": no numbers"}
	}
	return out, nil
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseBenchFlags(args, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if f.render != "" {
		return renderResults(f, stdout)
	}
	// An empty -n with -paths runs the many-locks section alone.
	var ns []int
	if strings.TrimSpace(f.ns) != "" || strings.TrimSpace(f.paths) == "" {
		if ns, err = parseInts(f.ns); err != nil {
			return err
		}
	}
	for _, name := range splitNames(f.headlineOnly) {
		if _, err := bench.Lookup(name); err != nil {
			return usageError{"-headline-only: " + err.Error()}
		}
	}
	variants, skipped, err := benchVariants(f, stderr)
	if err != nil {
		return err
	}
	holdVs, holdSkipped, holdFailures := holdVariants(f, stderr)
	manyVs, manyMs, manySkipped, err := manyLocksVariants(f, stderr)
	if err != nil {
		return err
	}
	plan, err := makePlan(f, variants, ns, holdVs)
	if err != nil {
		return err
	}
	plan.addManyLocks(f, manyVs, manyMs)
	for _, l := range wrapText(plan.describe(f), 100, "  ") {
		fmt.Fprintln(stderr, l)
	}
	if !f.full {
		if fp, ok := fullPlan(); ok {
			fmt.Fprintf(stderr, "  (-full, as make bench-docs: the whole grid, %d runs, the price, re-entry and hold cost, about %s)\n",
				fp.runs(), roughDuration(fp.estimate()))
		}
	}

	env := bench.LocalEnv()
	env.Skipped = append(append(skipped, holdSkipped...), manySkipped...)
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = a
		if a == "" {
			shown[i] = "''"
		}
	}
	env.Command = strings.TrimSpace("zklocks bench " + strings.Join(shown, " "))
	env.Duration, env.Acquisitions, env.Hold, env.Idle, env.Reentries = f.duration, f.acquisitions, f.hold, f.idle, f.reentries
	env.Lease = bench.TimeoutLease
	env.Rounds = f.rounds

	servers, stop, err := benchServers(ctx, f, &env, stderr)
	if err != nil {
		return err
	}
	defer stop()

	if f.cpuprofile != "" {
		pf, err := os.Create(f.cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			pf.Close()
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			pf.Close()
		}()
	}

	rep := &bench.Report{Env: env}
	var failures []string
	rounds, perRound := plan.rounds, plan.perRound
	prog := newProgress(stderr, f.progress, plan.steps)
	if plan.ceiling {
		prog.start(fmt.Sprintf("measuring the ensemble's quorum-write ceiling (steps of %v)", f.ceiling), nil, 0)
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		c, err := bench.MeasureCeiling(cctx, servers, f.ceiling)
		cancel()
		prog.done()
		if err != nil {
			msg := fmt.Sprintf("the quorum-write ceiling: %v", err)
			prog.println("FAILED " + msg)
			failures = append(failures, msg)
		} else {
			rep.Ceiling = &c
		}
	}
	if plan.price {
		prog.start(fmt.Sprintf("measuring what the token and Done cost on bare connections (%d rounds of %d samples)", rounds, f.priceSamples), nil, 0)
		pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		price, err := bench.MeasurePrice(pctx, servers, rounds, f.priceSamples)
		cancel()
		prog.done()
		if err != nil {
			prog.finish()
			return err
		}
		rep.Price = &price
	}
	// N is the outer loop: the variants compared at one N run right after
	// the floors they are compared with, and each run is split into rounds
	// that take turns (ABCABC...), so that a burst of load on this shared
	// machine falls on every variant alike instead of on one of them. The
	// peer takes its turn right after sequential.
	for _, n := range ns {
		cell := newCell()
		// The peers' driver processes live through the rounds at this N
		// (bench.DriverPool) and end before the next N's floors.
		drivers := bench.NewDriverPool()
		for round := 1; round <= rounds; round++ {
			// The floors of this round's turn: a handoff over them pairs
			// two figures of the same moment of a shared machine (one
			// floor per N put the ratio anywhere from 0.98x to 1.42x on
			// the same code).
			floors, err := measureFloors(ctx, servers, floorSamplesPerRound(f.floorSamples, rounds))
			if err != nil {
				prog.finish()
				drivers.Close()
				return err
			}
			if rep.Floors.Samples == 0 {
				rep.Floors = floors
			}
			for _, v := range plan.at[n] {
				if ctx.Err() != nil {
					prog.finish()
					drivers.Close()
					return ctx.Err()
				}
				var acquired atomic.Int64
				prog.start("", &acquired, perRound.acquisitions)
				if cell.failed[v.Name] {
					prog.done()
					continue
				}
				runCtx, cancel := context.WithTimeout(ctx, 3*perRound.duration+2*time.Minute)
				res, err := bench.Run(runCtx, bench.Config{
					Servers: servers, Variant: v, Contenders: n,
					Acquisitions: perRound.acquisitions, Duration: perRound.duration, Hold: f.hold, Idle: f.idle, Reentries: f.reentries,
					Floors: &floors, Acquired: &acquired, Drivers: drivers,
				})
				cancel()
				prog.done()
				if msg := cell.add(v.Name, fmt.Sprintf("n=%d", n), res, err, prog); msg != "" {
					failures = append(failures, msg)
					if ctx.Err() != nil {
						prog.finish()
						drivers.Close()
						return ctx.Err()
					}
				}
			}
		}
		if err := drivers.Close(); err != nil {
			msg := fmt.Sprintf("n=%d: closing the peers' drivers: %v", n, err)
			prog.println("FAILED " + msg)
			failures = append(failures, msg)
		}
		for _, v := range variants {
			if r := cell.merged[v.Name]; r != nil {
				rep.Results = append(rep.Results, *r)
			}
		}
	}

	failures = append(failures, runManyLocks(ctx, servers, f, plan, rep, prog)...)

	for _, v := range plan.reentry {
		prog.start(fmt.Sprintf("measuring re-entry of %s (%d re-entries)", v.Name, f.reentrySamp), nil, 0)
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		rr, err := bench.MeasureReentry(rctx, servers, v, f.reentrySamp)
		cancel()
		prog.done()
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s re-entry: %v", v.Name, err))
			continue
		}
		rep.Reentry = append(rep.Reentry, rr)
	}

	failures = append(failures, holdFailures...)
	failures = append(failures, measureHoldCosts(ctx, servers, plan, f.holdIdle, rep, prog)...)
	prog.finish()

	fmt.Fprintln(stdout)
	if err := rep.WriteSummary(stdout, f.headlineN); err != nil {
		return err
	}
	if f.out != "" && len(rep.Results) == 0 && len(rep.ManyLocks) > 0 {
		// The many-locks section alone (-n ''): its own file, and nothing
		// of a grid that did not run (make bench-docs' README.md and
		// figures in -out stay as they are).
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return err
		}
		fh, err := os.Create(filepath.Join(f.out, "many-locks.md"))
		if err != nil {
			return err
		}
		if err := errors.Join(rep.WriteManyLocksMarkdown(fh), fh.Close()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", filepath.Join(f.out, "many-locks.md"))
	} else if f.out != "" {
		if err := writeResults(rep, f); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s (the full table: %s)\n", filepath.Join(f.out, "README.md"), filepath.Join(f.out, "table.txt"))
	} else {
		fmt.Fprintln(stdout)
		if err := rep.WriteTable(stdout); err != nil {
			return err
		}
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d run(s) failed:\n  %s", len(failures), strings.Join(failures, "\n  "))
	}
	return nil
}

// benchServers returns the ensemble to use and a function that stops it
// (a local one), filling env's ensemble fields.
func benchServers(ctx context.Context, f benchFlags, env *bench.Env, stderr io.Writer) ([]string, func(), error) {
	var servers []string
	for _, s := range strings.Split(os.Getenv("ZK_SERVERS"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			servers = append(servers, s)
		}
	}
	stop := func() {}
	if len(servers) > 0 {
		env.External = true
		fmt.Fprintf(stderr, "using ZK_SERVERS=%s (-fsync and -tick do not apply)\n", strings.Join(servers, ","))
	} else {
		cfg := ensemble.DefaultConfig()
		cfg.ForceSync = f.fsync
		cfg.TickTime = f.tick
		fmt.Fprintf(stderr, "starting a local 3-node ZooKeeper ensemble (fsync %v, tick %v)...\n", f.fsync, f.tick)
		e, err := ensemble.Start(ctx, cfg)
		if err != nil {
			return nil, nil, err
		}
		servers = e.Servers()
		stop = func() { e.Close() }
		fsync := e.Config().ForceSync
		env.ForceSync = &fsync
		env.TickTime = e.Config().TickTime
	}
	env.Members = len(servers)
	st, err := ensemble.ServerStatus(servers[0])
	if err != nil {
		stop()
		return nil, nil, err
	}
	env.ZooKeeperVersion = cleanVersion(st.Version)
	if env.TickTime == 0 {
		env.TickTime = confTick(servers[0])
	}
	return servers, stop, nil
}

// cleanVersion drops an unexpanded build placeholder some packages leave
// in the version ("3.8.0-${mvngit.commit.id}").
func cleanVersion(v string) string {
	if i := strings.Index(v, "-${"); i >= 0 {
		return v[:i]
	}
	return v
}

// confTick reads tickTime from the server's conf answer (0 if unknown).
func confTick(addr string) time.Duration {
	out, err := ensemble.FourLetter(addr, "conf")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "tickTime="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return time.Duration(n) * time.Millisecond
			}
		}
	}
	return 0
}

func writeResults(rep *bench.Report, f benchFlags) error {
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	// make bench runs reentrant's BenchmarkReentry into reentry.txt first.
	if b, err := os.ReadFile(filepath.Join(f.out, "reentry.txt")); err == nil && strings.Contains(string(b), "BenchmarkReentry") {
		rep.ReentryBench = keepBenchLines(string(b))
	}
	if len(rep.Results) > 0 {
		if _, err := rep.WriteFigures(f.out); err != nil {
			return err
		}
	}
	write := func(name string, fn func(io.Writer) error) error {
		fh, err := os.Create(filepath.Join(f.out, name))
		if err != nil {
			return err
		}
		if err := fn(fh); err != nil {
			fh.Close()
			return err
		}
		return fh.Close()
	}
	if err := write("bench.txt", rep.WriteBenchfmt); err != nil {
		return err
	}
	if err := write("table.txt", rep.WriteTable); err != nil {
		return err
	}
	if len(rep.ManyLocks) > 0 {
		if err := write("many-locks.md", rep.WriteManyLocksMarkdown); err != nil {
			return err
		}
	}
	if f.render == "" {
		// The raw figures, so that the README and the figures can be
		// rendered again (-render) without running the bench again.
		err := write("results.json", func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(rep)
		})
		if err != nil {
			return err
		}
	}
	return write("README.md", func(w io.Writer) error { return rep.WriteMarkdown(w, f.headlineN) })
}

// runOrder puts the peers (bench.Peers) right after sequential, so that
// the headline comparisons pair rounds run a few seconds apart.
func runOrder(vs []bench.Variant) []bench.Variant {
	first := []string{"sequential"}
	first = append(first, bench.Peers...)
	var out, rest []bench.Variant
	for _, name := range first {
		for _, v := range vs {
			if v.Name == name {
				out = append(out, v)
			}
		}
	}
	for _, v := range vs {
		if !slices.Contains(first, v.Name) {
			rest = append(rest, v)
		}
	}
	return append(out, rest...)
}

// benchVariants looks up the variants of -variants. A peer run by a
// driver whose client is not installed is left out with a one-line
// message when it came with the default list, and fails the run when
// -variants named it.
func benchVariants(f benchFlags, stderr io.Writer) (vs []bench.Variant, skipped []string, err error) {
	for _, name := range strings.Split(f.variants, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		v, err := bench.Lookup(name)
		if err != nil {
			return nil, nil, usageError{err.Error()}
		}
		if v.External() {
			if err := v.Driver.Available(); err != nil {
				if f.variantsSet {
					return nil, nil, err
				}
				fmt.Fprintf(stderr, "skipping %s\n", err)
				skipped = append(skipped, err.Error())
				continue
			}
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return nil, nil, usageError{"-variants: none"}
	}
	return vs, skipped, nil
}

// keepBenchLines keeps a go test -bench output's configuration and
// benchmark lines, dropping PASS/ok lines.
func keepBenchLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "goos:") || strings.HasPrefix(l, "goarch:") ||
			strings.HasPrefix(l, "pkg:") || strings.HasPrefix(l, "cpu:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// renderResults writes the outputs of a saved run again.
func renderResults(f benchFlags, stdout io.Writer) error {
	b, err := os.ReadFile(f.render)
	if err != nil {
		return err
	}
	var rep bench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", f.render, err)
	}
	if f.out == "" {
		return usageError{"-render needs -out"}
	}
	if err := writeResults(&rep, f); err != nil {
		return err
	}
	if err := rep.WriteSummary(stdout, f.headlineN); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nrendered %s into %s\n", f.render, f.out)
	return nil
}

// holdVariants looks up -hold-variants, for the hold cost (none when
// -hold-counts is empty). A peer whose client is not installed is left
// out with a line and a note for the report (skipped), or, named in
// -hold-variants, is a failure of the run.
func holdVariants(f benchFlags, stderr io.Writer) (vs []bench.Variant, skipped, failures []string) {
	if strings.TrimSpace(f.holdCounts) == "" {
		return nil, nil, nil
	}
	for _, name := range splitNames(f.holdVariants) {
		v, err := bench.Lookup(name)
		if err != nil {
			failures = append(failures, fmt.Sprintf("-hold-variants: %v", err))
			continue
		}
		if v.External() {
			if err := v.Driver.Available(); err != nil {
				if f.holdSet {
					failures = append(failures, fmt.Sprintf("-hold-variants: %v", err))
				} else {
					fmt.Fprintf(stderr, "skipping the hold cost of %s\n", err)
					skipped = append(skipped, "hold cost of "+err.Error())
				}
				continue
			}
		}
		vs = append(vs, v)
	}
	return vs, skipped, failures
}

// measureHoldCosts measures, for each of the plan's hold variants and
// counts, what holding that many locks idle on one session costs, into
// rep. It returns the failures.
func measureHoldCosts(ctx context.Context, servers []string, plan benchPlan, idle time.Duration, rep *bench.Report, prog *progress) []string {
	var failures []string
	for _, v := range plan.hold {
		for _, n := range plan.counts {
			prog.start(fmt.Sprintf("measuring %s holding %d locks idle on one session for %v", v.Name, n, idle), nil, 0)
			hctx, cancel := context.WithTimeout(ctx, idle+5*time.Minute)
			r, err := bench.MeasureHoldCost(hctx, servers, v, n, idle)
			cancel()
			prog.done()
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s holding %d: %v", v.Name, n, err))
				continue
			}
			rep.HoldCost = append(rep.HoldCost, r)
		}
	}
	return failures
}

// measureFloors measures the floors once, bounded in time.
func measureFloors(ctx context.Context, servers []string, samples int) (bench.Floors, error) {
	fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return bench.MeasureFloors(fctx, servers, samples)
}

// floorSamplesPerRound spreads -floor-samples over the rounds of one N,
// with enough in each round for its median to mean something.
func floorSamplesPerRound(total, rounds int) int { return max(total/max(rounds, 1), 20) }
