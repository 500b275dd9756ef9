package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zklocks/zklocks/bench"
	"github.com/zklocks/zklocks/internal/ensemble"
)

func init() {
	register(command{
		name:    "txns",
		summary: "count the transactions a lock's runs write, by type and path, from the leader's log (TxnLogToolkit)",
		run:     runTxns,
	})
}

const txnsUsage = `usage: zklocks txns [flags]

Runs each variant of -variants at each N of -n on a local 3-node ensemble
(as zklocks bench runs it, one round of -duration), then decodes the
leader's transaction log with ZooKeeper's own TxnLogToolkit and counts
the transactions written while the contenders ran (between the leader's
zxid just before the first contender started and just after the last one
ended), per acquisition: by type (create, delete, error with its code,
...), and by type and path, the run's directory written <lock> and
sequence numbers and the nodes' ids (GUIDs) left out. Prints markdown tables.

flags:`

func runTxns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("zklocks txns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, txnsUsage); fs.PrintDefaults() }
	variants := fs.String("variants", "multilock-2,curator-multilock-2", "comma-separated variants")
	nsFlag := fs.String("n", "1,16,64", "comma-separated numbers of contenders")
	duration := fs.Duration("duration", 4*time.Second, "contention time of each run")
	paths := fs.Int("paths", 0, "many locks at once: lock paths of -n contenders each (0: one lock)")
	fsync := fs.Bool("fsync", true, "fsync the transaction log before acknowledging (forceSync)")
	fresh := fs.Bool("fresh", false, "leave a Go multilock's lock paths (path/l0, ...) to its contenders, as on a path never used before: "+
		"their first creates, and the paths' own, fall inside the window (the bench makes them before the run)")
	if err := parse(fs, args); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	ns, err := parseInts(*nsFlag)
	if err != nil {
		return err
	}
	var vs []bench.Variant
	for _, name := range splitNames(*variants) {
		v, err := bench.Lookup(name)
		if err != nil {
			return usageError{err.Error()}
		}
		if v.External() {
			if err := v.Driver.Available(); err != nil {
				return err
			}
		}
		if *fresh && !v.External() {
			v.Locks = 0 // the harness makes no lock path under the lock path
		}
		vs = append(vs, v)
	}
	cfg := ensemble.DefaultConfig()
	cfg.ForceSync = *fsync
	cfg.TickTime = 200 * time.Millisecond
	jars, java, err := ensemble.Classpath(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "starting a local 3-node ZooKeeper ensemble (fsync %v, tick %v)...\n", cfg.ForceSync, cfg.TickTime)
	e, err := ensemble.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	leader, err := e.Leader()
	if err != nil {
		return err
	}
	leaderAddr := e.Members()[leader].Addr
	zxid := func() int64 {
		st, err := ensemble.ServerStatus(leaderAddr)
		if err != nil {
			return -1
		}
		return st.Zxid
	}

	type run struct {
		variant  string
		n        int
		acq      int64
		props    int64
		from, to int64 // the leader's zxids around the contention
	}
	var runs []run
	for _, v := range vs {
		for _, n := range ns {
			fmt.Fprintf(stderr, "%s n=%d...\n", v.Name, n)
			r := run{variant: v.Name, n: n}
			rctx, cancel := context.WithTimeout(ctx, 3*(*duration)+2*time.Minute)
			res, err := bench.Run(rctx, bench.Config{Servers: e.Servers(), Variant: v, Contenders: n, Paths: *paths, Duration: *duration,
				OnStart: func() { r.from = zxid() }, OnStop: func() { r.to = zxid() }})
			cancel()
			if err != nil {
				return err
			}
			if r.from < 0 || r.to < 0 {
				return errors.New("txns: could not read the leader's zxid")
			}
			r.acq, r.props = res.Acquisitions, res.Server.Proposals
			runs = append(runs, r)
		}
	}
	if l, err := e.Leader(); err != nil || l != leader {
		return fmt.Errorf("txns: the leader changed during the runs (%d, then %d, %v): its log is not the whole story", leader, l, err)
	}

	logs, _ := filepath.Glob(filepath.Join(e.Members()[leader].Dir, "data", "version-2", "log.*"))
	if len(logs) == 0 {
		return fmt.Errorf("txns: no transaction log in %s", e.Members()[leader].Dir)
	}
	var txns []txn
	for _, log := range logs {
		out, err := exec.CommandContext(ctx, java, "-cp", strings.Join(jars, ":"),
			"org.apache.zookeeper.server.persistence.TxnLogToolkit", log).Output()
		if err != nil {
			return fmt.Errorf("txns: TxnLogToolkit %s: %w", log, err)
		}
		txns = append(txns, parseTxnDump(out)...)
	}

	fmt.Fprintf(stdout, "Transactions per acquisition, from the leader's log (TxnLogToolkit), %v of contention per run, fsync %v, fresh paths %v:\n\n",
		*duration, cfg.ForceSync, *fresh)
	byType := make([]map[string]int64, len(runs))
	byPath := make([]map[string]int64, len(runs))
	types, keys := map[string]bool{}, map[string]bool{}
	for i, r := range runs {
		byType[i], byPath[i] = map[string]int64{}, map[string]int64{}
		for _, t := range txns {
			if t.zxid <= r.from || t.zxid > r.to {
				continue
			}
			byType[i][t.kind]++
			byPath[i][t.kind+" "+t.path]++
			types[t.kind], keys[t.kind+" "+t.path] = true, true
		}
	}
	typeList, keyList := sortedKeys(types), sortedKeys(keys)
	head := []string{"variant", "N", "acquisitions", "proposals/acq (mntr)", "txns/acq (log)"}
	head = append(head, typeList...)
	fmt.Fprintf(stdout, "| %s |\n|---|%s\n", strings.Join(head, " | "), strings.Repeat("---:|", len(head)-1))
	for i, r := range runs {
		var total int64
		for _, c := range byType[i] {
			total += c
		}
		row := []string{r.variant, fmt.Sprint(r.n), fmt.Sprint(r.acq), perAcq(r.props, r.acq), perAcq(total, r.acq)}
		for _, k := range typeList {
			row = append(row, perAcq(byType[i][k], r.acq))
		}
		fmt.Fprintf(stdout, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintf(stdout, "\nBy type and path (per acquisition; <lock> is the run's lock path, <seq> a sequence number, <id> a node's GUID):\n\n")
	head = []string{"type and path"}
	for _, r := range runs {
		head = append(head, fmt.Sprintf("%s N=%d", r.variant, r.n))
	}
	fmt.Fprintf(stdout, "| %s |\n|---|%s\n", strings.Join(head, " | "), strings.Repeat("---:|", len(head)-1))
	for _, k := range keyList {
		row := []string{"`" + k + "`"}
		for i, r := range runs {
			row = append(row, perAcq(byPath[i][k], r.acq))
		}
		fmt.Fprintf(stdout, "| %s |\n", strings.Join(row, " | "))
	}
	return nil
}

func perAcq(x, acq int64) string {
	if acq == 0 {
		return "-"
	}
	if x == 0 {
		return "0"
	}
	return fmt.Sprintf("%.3f", float64(x)/float64(acq))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// txn is one transaction of TxnLogToolkit's dump: its zxid, its kind
// ("create", "delete", "error -110", ...) and its path normalised.
type txn struct {
	zxid int64
	kind string
	path string
}

var (
	txnLine   = regexp.MustCompile(`zxid 0x([0-9a-f]+) (\S+)(?: (.*))?$`)
	benchPath = regexp.MustCompile(`/zklocks-bench[^ ,')]*`)
	runDir    = regexp.MustCompile(`^/zklocks-bench/[^/]+/lock`)
	seqNum    = regexp.MustCompile(`\d{10}$`)
	guidPart  = regexp.MustCompile(`_c_[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// parseTxnDump reads TxnLogToolkit's dump: one line per transaction,
// "<time> session 0x.. cxid 0x.. zxid 0x<zxid> <type> <txn>".
func parseTxnDump(out []byte) []txn {
	var txns []txn
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := txnLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		z, err := strconv.ParseInt(m[1], 16, 64)
		if err != nil {
			continue
		}
		t := txn{zxid: z, kind: m[2]}
		rest := strings.TrimSpace(m[3])
		switch {
		case t.kind == "error":
			t.kind = "error " + strings.Trim(rest, "'")
		default:
			p := benchPath.FindString(rest)
			p = runDir.ReplaceAllString(p, "<lock>")
			p = guidPart.ReplaceAllString(p, "<id>")
			t.path = seqNum.ReplaceAllString(p, "<seq>")
		}
		txns = append(txns, t)
	}
	return slices.Clip(txns)
}
