package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/zklocks/zklocks/bench"
	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/rivals"
)

func init() {
	register(command{
		name:    "rivals",
		summary: "measure the rival locks (etcd, Redis, Redlock, PostgreSQL) beside ZooKeeper's, each on servers of its own",
		run:     runRivals,
	})
}

const rivalsUsage = `usage: zklocks rivals [flags]

Starts the rival lock servers on loopback (a three-member etcd cluster,
one Redis, five Redis for Redlock, one PostgreSQL; installed by
scripts/install-rivals.sh) and a three-member ZooKeeper ensemble, and
measures each rival lock (internal/rivals) beside zklocks' sequential lock
("zookeeper")
with N contenders, each with a client of its own, all on one lock: the
throughput and the handoff and acquire latencies, in rounds the systems
take in turns, reported as medians over the rounds with 95% intervals
(bench.MedianCI, as zklocks bench reports the ZooKeeper locks). A system
whose server cannot be started is left out with one line. Prints a
Markdown table; -out also writes it to a file.

flags:`

type rivalsFlags struct {
	systems  []rivals.System
	ns       []int
	rounds   int
	duration time.Duration
	hold     time.Duration
	idle     time.Duration
	opts     rivals.Options
	out      string
}

var allRivals = []rivals.System{systemZK, rivals.SystemEtcd, rivals.SystemRedis, rivals.SystemRedlock,
	rivals.SystemPGSession, rivals.SystemPGXact}

func parseRivalsFlags(args []string, stderr io.Writer) (rivalsFlags, error) {
	var f rivalsFlags
	var systems, ns string
	names := make([]string, len(allRivals))
	for i, s := range allRivals {
		names[i] = string(s)
	}
	fs := flag.NewFlagSet("zklocks rivals", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, rivalsUsage); fs.PrintDefaults() }
	fs.StringVar(&systems, "systems", strings.Join(names, ","), "comma-separated rival locks to run")
	fs.StringVar(&ns, "n", "1,4,16", "comma-separated numbers of contenders")
	fs.IntVar(&f.rounds, "rounds", defaultRounds, "rounds per system and N, taken in turns (6 or more for a 95% interval)")
	fs.DurationVar(&f.duration, "duration", time.Second, "contention time of one round")
	fs.DurationVar(&f.hold, "hold", 0, "critical section: how long each holder keeps the lock")
	fs.DurationVar(&f.idle, "idle", 0, "time a contender waits after releasing before it asks again (without it a Redis releaser often takes the lock straight back)")
	fs.DurationVar(&f.opts.TTL, "ttl", 10*time.Second, "etcd's lease, Redis's and Redlock's key expiry")
	fs.DurationVar(&f.opts.RetryPause, "retry-pause", 10*time.Millisecond, "Redis's and Redlock's pause between tries (drawn from half to one and a half of it)")
	fs.StringVar(&f.out, "out", "", "also write the Markdown report to this file")
	if err := parse(fs, args); err != nil {
		return f, err
	}
	for _, s := range strings.Split(systems, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(names, s) {
			return f, usageError{fmt.Sprintf("-systems: unknown system %q (known: %s)", s, strings.Join(names, ", "))}
		}
		f.systems = append(f.systems, rivals.System(s))
	}
	if len(f.systems) == 0 {
		return f, usageError{"-systems: none"}
	}
	var err error
	if f.ns, err = parseCounts(ns, "-n", 1); err != nil {
		return f, err
	}
	if f.rounds < 1 || f.duration <= 0 || f.hold < 0 || f.idle < 0 {
		return f, usageError{"-rounds must be at least 1, -duration positive, -hold and -idle not negative"}
	}
	return f, nil
}

// rivalServers are the servers one run started, and how to open a
// Locker of each system on them.
type rivalServers struct {
	zk      *ensemble.Ensemble
	etcd    *rivals.Etcd
	redis   *rivals.Redis
	redlock []*rivals.Redis
	pg      *rivals.Postgres
}

func (s *rivalServers) close() {
	if s.zk != nil {
		s.zk.Close()
	}
	if s.etcd != nil {
		s.etcd.Close()
	}
	if s.redis != nil {
		s.redis.Close()
	}
	for _, r := range s.redlock {
		r.Close()
	}
	if s.pg != nil {
		s.pg.Close()
	}
}

// start starts the server system needs, unless it runs already.
func (s *rivalServers) start(ctx context.Context, system rivals.System) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var err error
	switch system {
	case systemZK:
		if s.zk == nil {
			s.zk, err = startZK(ctx)
		}
	case rivals.SystemEtcd:
		if s.etcd == nil {
			s.etcd, err = rivals.StartEtcd(ctx)
		}
	case rivals.SystemRedis:
		if s.redis == nil {
			s.redis, err = rivals.StartRedis(ctx, rivals.RedisConfig{})
		}
	case rivals.SystemRedlock:
		if s.redlock == nil {
			s.redlock, err = rivals.StartRedises(ctx, 5)
		}
	default:
		if s.pg == nil {
			s.pg, err = rivals.StartPostgres(ctx)
		}
	}
	return err
}

func (s *rivalServers) open(ctx context.Context, system rivals.System, lock string, o rivals.Options) (rivals.Locker, error) {
	switch system {
	case systemZK:
		return newZKLock(ctx, s.zk.Servers(), lock)
	case rivals.SystemEtcd:
		return rivals.NewEtcdLock(ctx, s.etcd.Endpoints(), lock, o)
	case rivals.SystemRedis:
		return rivals.NewRedisLock(s.redis.Addr, lock, o), nil
	case rivals.SystemRedlock:
		addrs := make([]string, len(s.redlock))
		for i, r := range s.redlock {
			addrs[i] = r.Addr
		}
		return rivals.NewRedlockLock(addrs, lock, o), nil
	case rivals.SystemPGSession:
		return rivals.NewPGSessionLock(ctx, s.pg.DSN(), lock)
	default:
		return rivals.NewPGXactLock(ctx, s.pg.DSN(), lock)
	}
}

// durableUnits names what durable reads for each system.
var durableUnits = map[rivals.System]string{
	systemZK:               "quorum writes",
	rivals.SystemEtcd:      "Raft entries",
	rivals.SystemRedis:     "AOF bytes",
	rivals.SystemRedlock:   "AOF bytes, 5 servers",
	rivals.SystemPGSession: "WAL bytes",
	rivals.SystemPGXact:    "WAL bytes",
}

// durable reads the counter of what system's servers have written
// durably so far, in durableUnits.
func (s *rivalServers) durable(ctx context.Context, system rivals.System) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	switch system {
	case systemZK:
		return zkProposals(s.zk)
	case rivals.SystemEtcd:
		n, err := s.etcd.RaftIndex(ctx)
		return float64(n), err
	case rivals.SystemRedis:
		n, err := s.redis.AOFBytes(ctx)
		return float64(n), err
	case rivals.SystemRedlock:
		var sum int64
		for _, r := range s.redlock {
			n, err := r.AOFBytes(ctx)
			if err != nil {
				return 0, err
			}
			sum += n
		}
		return float64(sum), nil
	default:
		n, err := s.pg.WALBytes(ctx)
		return float64(n), err
	}
}

// perAcquisition is the counter's growth over a round divided by the
// round's acquisitions; NaN when a reading failed or the counter went
// back (a Redis AOF rewrite).
func perAcquisition(before, after float64, errBefore, errAfter error, acquisitions int64) float64 {
	if errBefore != nil || errAfter != nil || after < before || acquisitions == 0 {
		return math.NaN()
	}
	return (after - before) / float64(acquisitions)
}

func runRivals(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseRivalsFlags(args, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	var servers rivalServers
	defer servers.close()
	var systems []rivals.System
	var notes []string
	for _, s := range f.systems {
		if err := servers.start(ctx, s); err != nil {
			note := fmt.Sprintf("%s left out: its server did not start: %v", s, firstLine(err))
			fmt.Fprintln(stderr, "zklocks rivals:", note)
			notes = append(notes, note)
			continue
		}
		systems = append(systems, s)
	}
	if len(systems) == 0 {
		return errors.New("no rival server could be started (scripts/install-rivals.sh installs them)")
	}

	results := map[rivals.System]map[int]*rivalResult{}
	for _, s := range systems {
		results[s] = map[int]*rivalResult{}
	}
	failed := map[rivals.System]bool{}
	for _, n := range f.ns {
		lockers := map[rivals.System][]rivals.Locker{}
		for _, s := range systems {
			if failed[s] {
				continue
			}
			ls, err := openLockers(ctx, &servers, s, n, f.opts)
			if err != nil {
				failed[s] = true
				notes = append(notes, fmt.Sprintf("%s failed at N=%d: %v", s, n, firstLine(err)))
				continue
			}
			lockers[s] = ls
			results[s][n] = &rivalResult{Result: bench.Result{Variant: string(s), Contenders: n, Hold: f.hold, Idle: f.idle}}
		}
		for round := 1; round <= f.rounds; round++ {
			fmt.Fprintf(stderr, "zklocks rivals: N=%d, round %d of %d\n", n, round, f.rounds)
			for _, s := range systems {
				if failed[s] || lockers[s] == nil {
					continue
				}
				before, errBefore := servers.durable(ctx, s)
				rctx, cancel := context.WithTimeout(ctx, f.duration+f.hold+f.idle+time.Minute)
				fig, err := rivals.RunRound(rctx, lockers[s],
					rivals.RoundConfig{Duration: f.duration, Hold: f.hold, Idle: f.idle})
				cancel()
				after, errAfter := servers.durable(ctx, s)
				if ctx.Err() != nil {
					closeLockers(lockers)
					return ctx.Err()
				}
				if err != nil {
					failed[s] = true
					notes = append(notes, fmt.Sprintf("%s failed at N=%d, round %d: %v", s, n, round, firstLine(err)))
					continue
				}
				r := results[s][n]
				r.PerRound = append(r.PerRound, fig.RoundFigures)
				r.topShare = append(r.topShare, fig.TopShare)
				r.durable = append(r.durable, perAcquisition(before, after, errBefore, errAfter, fig.Acquisitions))
				r.Acquisitions += fig.Acquisitions
				r.Elapsed += fig.Elapsed
				r.Rounds++
			}
		}
		closeLockers(lockers)
	}

	report := rivalsReport(f, args, systems, results, notes)
	fmt.Fprint(stdout, report)
	if f.out != "" {
		if err := os.MkdirAll(filepath.Dir(f.out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(f.out, []byte(report), 0o644); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d system(s) failed; see the notes under the table", len(failed))
	}
	return nil
}

// rivalResult is one system at one N: its rounds, kept as the bench
// keeps the ZooKeeper locks' (so bench's statistics apply), and each
// round's largest share of acquisitions by one contender and its durable
// writes per acquisition.
type rivalResult struct {
	bench.Result
	topShare []float64
	durable  []float64 // per round, in durableUnits
}

func openLockers(ctx context.Context, servers *rivalServers, s rivals.System, n int, o rivals.Options) ([]rivals.Locker, error) {
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var ls []rivals.Locker
	for range n {
		l, err := servers.open(octx, s, "bench", o)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}

func closeLockers(m map[rivals.System][]rivals.Locker) {
	for _, ls := range m {
		for _, l := range ls {
			l.Close()
		}
	}
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// rivalsReport is the Markdown report of a run: what ran where, then one
// row per system and N.
func rivalsReport(f rivalsFlags, args []string, systems []rivals.System,
	results map[rivals.System]map[int]*rivalResult, notes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Rival locks, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Command: `%s`  \n", strings.TrimSpace("zklocks rivals "+strings.Join(args, " ")))
	fmt.Fprintf(&b, "Machine: %d CPUs, %s/%s, %s; every server on 127.0.0.1.  \n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	v := rivals.Versions()
	fmt.Fprintf(&b, "Servers: %s; %s; %s.  \n", orUnknown(v["etcd"]), orUnknown(v["redis"]), orUnknown(v["postgres"]))
	fmt.Fprintf(&b, "Durability: etcd fsyncs every entry on a majority of 3; Redis appendonly yes, appendfsync everysec; "+
		"PostgreSQL fsync on, synchronous_commit on (advisory locks write nothing).  \n")
	fmt.Fprintf(&b, "Rounds: %d of %v per system and N, taken in turns; hold %v, idle %v; TTL %v; Redis and Redlock retry pause %v.\n\n",
		f.rounds, f.duration, f.hold, f.idle, f.opts.TTL, f.opts.RetryPause)
	fmt.Fprintf(&b, "Medians over the rounds with their %.0f%% intervals [lo-hi]; latencies in ms. "+
		"Top share: the largest part of a round's acquisitions made by one contender (1/N when waiters are served in turn). "+
		"Durable writes: what the servers logged per acquisition, read from their own counters around each round "+
		"(etcd's Raft index, Redis's aof_current_size, PostgreSQL's pg_current_wal_lsn, which background work moves too).\n\n",
		100*bench.ConfidenceLevel)
	b.WriteString("| system | N | acquisitions/s | handoff p50 | handoff p99 | acquire p50 | top share | durable writes / acquisition |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range systems {
		for _, n := range f.ns {
			r, ok := results[s][n]
			if !ok || len(r.PerRound) == 0 {
				continue
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s %s |\n", s, n,
				est(r.Estimate(bench.FigThroughput)), est(r.Estimate(bench.FigHandoffP50)),
				est(r.Estimate(bench.FigHandoffP99)), est(r.Estimate(bench.FigAcquireP50)),
				est(bench.MedianCI(r.topShare)), est(bench.MedianCI(r.durable)), durableUnits[s])
		}
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "(version unknown)"
	}
	return s
}

// est prints a median and its interval, "4.12 [3.90-4.40]"; "-" when the
// rounds gave no value (no handoff with one contender).
func est(e bench.Estimate) string {
	if e.N == 0 || math.IsNaN(e.Median) {
		return "-"
	}
	g := func(x float64) string {
		switch a := math.Abs(x); {
		case a >= 99.95:
			return fmt.Sprintf("%.0f", x)
		case a >= 9.995:
			return fmt.Sprintf("%.1f", x)
		default:
			return fmt.Sprintf("%.3g", x)
		}
	}
	if !e.HasInterval() {
		return g(e.Median)
	}
	return fmt.Sprintf("%s [%s-%s]", g(e.Median), g(e.Lo), g(e.Hi))
}
