package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/zklocks/zklocks/internal/liveness"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

func init() {
	register(command{name: "inspect", summary: "show who holds a lock and who waits for it", run: runInspect})
}

const inspectHelp = `usage: zklocks inspect [-servers host:port,...] [-json] [-watch [-interval 1s]]
                       [-watchers=false] [-timeout 10s] /lock/path ...

Shows, for each lock path, who holds the lock and who waits for it, in lock
order. It reads the naive lock (the path is itself the holder's ephemeral
node) and the queue of sequential children that the sequential, reentrant
and timeout locks share, and names other libraries' nodes where their names
tell them apart: Curator's (_c_<uuid>-lock-N) and kazoo's (<hex>__lock__N).
go-zookeeper's zk.Lock names its nodes as zklocks does and shows as
zklocks-sequential.

Columns:
  #, ROLE    place in the queue: #0 holds the lock, the others wait in turn
  KIND       zklocks-sequential, zklocks-reentrant, zklocks-timeout, naive,
             curator, kazoo or unknown
  NODE, SEQ  the node's name and the sequence number ZooKeeper gave it
  TOKEN      the node's czxid: the fencing token of that hold
  SESSION    the session that owns the node (its ephemeralOwner)
  AGE        time since the node was created. A waiter has waited that long.
             The holder of a queue ("<=") has held the lock for at most that
             long: it may have waited first, and ZooKeeper does not record
             when it took over. The naive lock's node is created by the
             acquisition, so its age is the hold's.
  WRITTEN    time since the node was last written (its mtime): a timeout
             lock's lease renewals and probes, a reentrant count change
  WATCHERS   watches the servers hold on the node
  DATA       what the contender stored: a reentrant owner record, a timeout
             lease (time left, or EXPIRED by the ensemble's clock), raw text

Ages are read from the ensemble's clock, never this machine's: each snapshot
creates and deletes an ephemeral node /zklocks-inspect-<seq> at the root and
takes its mtime as "now". Without permission to create it, ages show "-".

Watch counts come from the four-letter command wchp, sent to every server
listed: list every member and whitelist wchp (4lw.commands.whitelist), or
the counts show "?". The command conf tells inspect how many members there
are, so a member left out also shows "?" (when conf is whitelisted; a
member listed twice is counted once). wchp makes a server walk all its watches under a lock,
which is expensive on a server with very many of them; -watchers=false
skips it.

A missing path is not an error: it prints "no such lock" (in JSON, exists is
false) and the exit status is 0. An ensemble that does not answer within
-timeout is an error (exit status 1); a bad path is a usage error (2).

-json prints one JSON object per snapshot (schema: docs/inspect.md). -watch
prints a snapshot every -interval until interrupted (Ctrl-C), each after a
separator line, or with -json one object per line; -timeout then bounds the
connection and each refresh, and a failed refresh is reported and retried.

Servers come from -servers, else ZK_SERVERS, else the ensemble started by
"zklocks ensemble up".`

// minInterval keeps -watch from hammering the ensemble: every refresh
// writes the clock probe and, by default, asks every member for wchp.
const minInterval = 100 * time.Millisecond

type inspectOpts struct {
	json, watch, watchers bool
	interval, timeout     time.Duration
}

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("zklocks inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	statePath := fs.String("state", defaultStatePath(), "state file of a local ensemble started by zklocks ensemble up")
	servers := fs.String("servers", "", "comma-separated host:port list (default: ZK_SERVERS, else the local ensemble's state file)")
	var o inspectOpts
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up after this long (with -watch: the connection and each refresh)")
	fs.BoolVar(&o.json, "json", false, "print JSON (schema: docs/inspect.md)")
	fs.BoolVar(&o.watch, "watch", false, "refresh every -interval until interrupted")
	fs.DurationVar(&o.interval, "interval", time.Second, "time between refreshes with -watch (at least 100ms)")
	fs.BoolVar(&o.watchers, "watchers", true, "count watches with the 4lw command wchp on every server")
	fs.Usage = func() { fmt.Fprintln(stderr, inspectHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	paths := fs.Args()
	if err := checkInspectArgs(paths, o); err != nil {
		return err
	}
	addrs, err := inspectServers(*servers, *statePath)
	if err != nil {
		return err
	}
	in, err := openInspector(ctx, addrs, o)
	if err != nil {
		if o.watch && ctx.Err() != nil {
			return nil // interrupted before the first refresh
		}
		return err
	}
	defer in.session.Close()
	if o.watch {
		return watchLocks(ctx, in, paths, o, stdout, stderr)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	rep, err := in.snapshot(ctx, paths)
	if err != nil {
		return in.explain(ctx, err, o.timeout)
	}
	return writeReport(stdout, rep, o, "")
}

func checkInspectArgs(paths []string, o inspectOpts) error {
	if len(paths) == 0 {
		return usageError{"no lock path given"}
	}
	for _, p := range paths {
		if err := zkpath.Validate(p); err != nil {
			return usageError{err.Error()}
		}
	}
	if o.timeout <= 0 {
		return usageError{fmt.Sprintf("-timeout %v: want a positive duration", o.timeout)}
	}
	if o.watch && o.interval < minInterval {
		return usageError{fmt.Sprintf("-interval %v: want at least %v", o.interval, minInterval)}
	}
	return nil
}

// openInspector opens the session, waiting at most -timeout for it.
func openInspector(ctx context.Context, addrs []string, o inspectOpts) (*inspector, error) {
	cctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	conn, err := connect(cctx, addrs, 10*time.Second)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("ensemble unreachable: no session within -timeout %v: %w", o.timeout, err)
		}
		return nil, err
	}
	return &inspector{
		session:  conn,
		conn:     conn.Conn(),
		client:   zkop.New(conn.Conn(), liveness.SessionClock(conn)),
		servers:  addrs,
		watchers: o.watchers,
	}, nil
}

// explain names the servers in an error caused by a silent ensemble.
func (in *inspector) explain(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the ensemble (%s) did not answer within -timeout %v: %w", strings.Join(in.servers, ","), timeout, err)
	}
	return err
}

// watchLocks prints a snapshot every o.interval until ctx ends, and then
// returns nil: an interrupt is how -watch is meant to stop. A refresh that
// fails is reported on stderr, and the next one is tried as usual.
func watchLocks(ctx context.Context, in *inspector, paths []string, o inspectOpts, stdout, stderr io.Writer) error {
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	for n := 1; ; n++ {
		rctx, cancel := context.WithTimeout(ctx, o.timeout)
		rep, err := in.snapshot(rctx, paths)
		err = in.explain(rctx, err, o.timeout)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		sep := fmt.Sprintf("---- refresh %d, every %v (Ctrl-C stops) ----\n", n, o.interval)
		if err != nil {
			fmt.Fprintf(stderr, "zklocks inspect: refresh %d: %v\n", n, err)
		} else if err := writeReport(stdout, rep, o, sep); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// writeReport prints rep as text (after the separator sep, if any) or as
// JSON: indented for one snapshot, one line per snapshot with -watch.
func writeReport(w io.Writer, rep *report, o inspectOpts, sep string) error {
	if !o.json {
		fmt.Fprint(w, sep)
		printReport(w, rep)
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if !o.watch {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(rep)
}

// inspectServers picks the ensemble: the flag, ZK_SERVERS, or the state
// file of "zklocks ensemble up", in that order.
func inspectServers(flagValue, statePath string) ([]string, error) {
	for _, s := range []string{flagValue, os.Getenv("ZK_SERVERS")} {
		if addrs := splitServers(s); len(addrs) > 0 {
			return addrs, nil
		}
	}
	st, err := readState(statePath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("no ensemble: pass -servers, set ZK_SERVERS, or start one with zklocks ensemble up")
		}
		return nil, err
	}
	return splitServers(st.ConnectString), nil
}

func splitServers(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
