package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zkpath"
	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/sequential"
)

func init() {
	register(command{name: "inspect", summary: "show who holds a lock and who waits for it", run: runInspect})
}

const inspectHelp = `usage: zklocks inspect [-servers host:port,...] [-timeout 10s] /lock/path ...

Prints, for each lock path, its queue in lock order: the first contender
holds the lock, the others wait in turn. For a naive lock (the node at the
path itself) it prints that node. Each line gives the node, its sequence
number, its czxid (the fencing token of that hold), the session that owns
it, how long ago the ensemble last wrote it (by the ensemble's clock), and
what the contender stored in it (a reentrant holder record is decoded).

Servers come from -servers, else ZK_SERVERS, else the ensemble started by
"zklocks ensemble up".`

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("zklocks inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	statePath := fs.String("state", defaultStatePath(), "state file of a local ensemble started by zklocks ensemble up")
	servers := fs.String("servers", "", "comma-separated host:port list (default: ZK_SERVERS, else the local ensemble's state file)")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after this long")
	fs.Usage = func() { fmt.Fprintln(stderr, inspectHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return usageError{"no lock path given"}
	}
	for _, p := range paths {
		if err := zkpath.Validate(p); err != nil {
			return usageError{err.Error()}
		}
	}
	addrs, err := inspectServers(*servers, *statePath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	conn, err := connect(ctx, addrs, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, p := range paths {
		if err := inspectPath(ctx, conn, p, stdout); err != nil {
			return err
		}
	}
	return nil
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

func inspectPath(ctx context.Context, conn *zk.Conn, path string, w io.Writer) error {
	now, err := ensembleNow(ctx, conn, path)
	if err != nil {
		return err
	}
	data, self, err := conn.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		fmt.Fprintf(w, "%s: no such lock (nobody holds or waits)\n\n", path)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var rows []sequential.Contender
	if self.EphemeralOwner != 0 { // the naive layout: the node is the lock
		rows = []sequential.Contender{{Node: path, Seq: -1, Data: data, Stat: *self}}
	} else if rows, err = sequential.Contenders(ctx, conn, path); err != nil {
		return err
	}
	printQueue(w, path, rows, now)
	return nil
}

// ensembleNow returns the ensemble's clock: the mtime of a write it has
// just stamped. A sync first makes the reads that follow at least as new.
// Ages are then differences of two server timestamps, never of the
// inspecting machine's clock. Where the probe can not be written (no
// permission at the root) it returns 0 and the ages are left out.
func ensembleNow(ctx context.Context, conn *zk.Conn, path string) (int64, error) {
	if _, err := conn.Sync(path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return 0, fmt.Errorf("sync %s: %w", path, err)
	}
	probe, err := conn.Create("/zklocks-inspect-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		return 0, nil
	}
	_, stat, err := conn.Get(probe)
	_ = conn.Delete(probe, -1) // our own fresh ephemeral node; it also goes with the session
	if err != nil {
		return 0, fmt.Errorf("read the probe node: %w", err)
	}
	return stat.Mtime, ctx.Err()
}

func printQueue(w io.Writer, path string, rows []sequential.Contender, now int64) {
	if len(rows) == 0 {
		fmt.Fprintf(w, "%s: free (no contenders)\n\n", path)
		return
	}
	fmt.Fprintf(w, "%s: %d contender(s), the first holds the lock\n", path, len(rows))
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tROLE\tNODE\tSEQ\tTOKEN(czxid)\tSESSION\tWRITTEN\tDATA")
	for i, c := range rows {
		role := "waits"
		if i == 0 {
			role = "holds"
		}
		seq := fmt.Sprint(c.Seq)
		if c.Seq < 0 && c.Node == path {
			seq = "-"
		}
		written := "-"
		if now != 0 {
			written = (time.Duration(now-c.Stat.Mtime) * time.Millisecond).String() + " ago"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%#x\t%s\t%s\n", i, role, strings.TrimPrefix(c.Node, path+"/"),
			seq, c.Stat.Czxid, c.Stat.EphemeralOwner, written, describeData(c.Data))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// describeData shows what a contender stored: a reentrant holder record
// decoded, other printable data as it is, anything else as a byte count.
func describeData(data []byte) string {
	if len(data) == 0 {
		return "-"
	}
	if h, err := reentrant.ParseHolder(data); err == nil {
		s := fmt.Sprintf("owner=%s host=%s pid=%d mode=%s", h.Owner, h.Host, h.PID, h.Mode)
		if h.Count > 0 {
			s += fmt.Sprintf(" count=%d", h.Count)
		}
		return s
	}
	s := string(data)
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("%d bytes", len(data))
		}
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
