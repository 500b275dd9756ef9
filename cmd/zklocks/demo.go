package main

// zklocks demo: small live demonstrations on a real ensemble (pause: on
// the rivals' servers too). Each demo lives in its own file
// (demo_fencing.go, demo_herd.go, demo_pause.go) and shares what is here:
// the dispatch, the server flags and the choice of ensemble, and the
// printer of timestamped lines.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/zklocks/zklocks/internal/ensemble"
)

func init() {
	register(command{name: "demo", summary: "live demonstrations: fencing (a paused holder and fencing tokens), herd (whom a release wakes), pause (a frozen holder on etcd, Redis, Redlock, PostgreSQL or ZooKeeper)", run: runDemo})
}

// demo is one demonstration: run gets the arguments after its name.
type demo struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// demos lists the demonstrations by name. A map filled in the demo files'
// init functions would do as well; a literal keeps the list in one place.
var demos = map[string]demo{
	"fencing": {"fencing", "Kleppmann's scenario: a paused holder, a fenced and an unfenced store", runFencing},
	"herd":    {"herd", "who each release wakes: naive (every waiter) against sequential (one)", runHerd},
	"pause":   {"pause", "a holder frozen past its TTL on one system: -system zk|etcd|redis|redlock|postgres", runPause},
}

func demoUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: zklocks demo <demo> [flags]\n\ndemos:")
	names := make([]string, 0, len(demos))
	for n := range demos {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, demos[n].summary)
	}
	fmt.Fprintln(w, "\nRun zklocks demo <demo> -h for its flags.")
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "fencing-holder" { // the fencing demo's child, not listed
		return fencingHolder(args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "pause-holder" { // the pause demo's child, not listed
		return pauseHolder(stdout)
	}
	if len(args) == 0 {
		demoUsage(stderr)
		return usageError{"which demo? (fencing, herd, pause)"}
	}
	if isHelp(args[0]) {
		demoUsage(stderr)
		return nil
	}
	d, ok := demos[args[0]]
	if !ok {
		demoUsage(stderr)
		return usageError{fmt.Sprintf("unknown demo %q", args[0])}
	}
	return d.run(ctx, args[1:], stdout, stderr)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// demoFlags is a demo's flag set with the flags every demo has: where the
// ensemble is.
type demoFlags struct {
	*flag.FlagSet
	servers, state *string
}

func newDemoFlags(name, help string, stderr io.Writer) *demoFlags {
	fs := flag.NewFlagSet("zklocks demo "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &demoFlags{FlagSet: fs}
	f.servers = fs.String("servers", "", "comma-separated host:port list (default: ZK_SERVERS, else zklocks ensemble up's, else a local ensemble)")
	f.state = fs.String("state", defaultStatePath(), "state file of a local ensemble started by zklocks ensemble up")
	fs.Usage = func() { fmt.Fprintln(stderr, help); fs.PrintDefaults() }
	return f
}

// parse parses args (see the package's parse).
func (f *demoFlags) parse(args []string) error { return parse(f.FlagSet, args) }

// ensemble returns the servers the demo uses: -servers, else ZK_SERVERS,
// else the ensemble of zklocks ensemble up; without any, it starts a local
// 3-node ensemble, which the returned stop function stops. It says which on
// out.
func (f *demoFlags) ensemble(ctx context.Context, out io.Writer) ([]string, func(), error) {
	if addrs, err := inspectServers(*f.servers, *f.state); err == nil && len(addrs) > 0 {
		fmt.Fprintf(out, "ZooKeeper: %s\n", strings.Join(addrs, ","))
		return addrs, func() {}, nil
	}
	fmt.Fprintf(out, "Starting a local 3-node ZooKeeper ensemble... ")
	start := time.Now()
	e, err := ensemble.Start(ctx, ensemble.DefaultConfig())
	if err != nil {
		fmt.Fprintln(out)
		return nil, nil, err
	}
	fmt.Fprintf(out, "ready in %v: %s\n", time.Since(start).Round(100*time.Millisecond), e.ConnectString())
	return e.Servers(), func() { e.Close() }, nil
}

// demoLog prints a demo's lines, each stamped with the time since the last
// reset, so that a reader can follow them live and a recorded terminal
// keeps the pace. Plain text, no colour: it reads the same over SSH, in a
// log and in a pasted transcript.
type demoLog struct {
	out   io.Writer
	start time.Time
}

func newDemoLog(out io.Writer) *demoLog { return &demoLog{out: out, start: time.Now()} }

// reset restarts the clock of the stamps.
func (l *demoLog) reset() { l.start = time.Now() }

// say prints one stamped line.
func (l *demoLog) say(format string, args ...any) {
	fmt.Fprintf(l.out, "[%5.2fs] %s\n", time.Since(l.start).Seconds(), fmt.Sprintf(format, args...))
}

// printf prints without a stamp (headers, summaries).
func (l *demoLog) printf(format string, args ...any) { fmt.Fprintf(l.out, format, args...) }
