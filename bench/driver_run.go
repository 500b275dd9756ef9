package bench

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// driverHold is one hold a driver reported, in its wall-clock
// nanoseconds: acquire called, acquire returned, release about to be
// called.
type driverHold struct {
	contender                     int
	requested, acquired, released int64
}

// parseHold reads "hold <name>-<i> <requested> <acquired> <released>".
func parseHold(line string) (driverHold, error) {
	f := strings.Fields(line)
	if len(f) != 5 || f[0] != "hold" {
		return driverHold{}, fmt.Errorf("not a hold line: %q", line)
	}
	var h driverHold
	var err error
	i := strings.LastIndexByte(f[1], '-')
	if h.contender, err = strconv.Atoi(f[1][i+1:]); err != nil {
		return h, fmt.Errorf("contender of %q: %w", line, err)
	}
	for k, p := range []*int64{&h.requested, &h.acquired, &h.released} {
		if *p, err = strconv.ParseInt(f[2+k], 10, 64); err != nil {
			return h, fmt.Errorf("time of %q: %w", line, err)
		}
	}
	return h, nil
}

// driverProc is a running driver, its stdout read line by line.
type driverProc struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc // of the command's context: kills it
	stdin  io.WriteCloser
	lines  chan string
	stderr *tailBuffer
	idle   time.Duration // stop's wait for the driver's next line: SessionTimeout
}

func startDriver(cmd *exec.Cmd, cancel context.CancelFunc) (*driverProc, error) {
	p := &driverProc{cmd: cmd, cancel: cancel, lines: make(chan string, 256), stderr: &tailBuffer{}, idle: SessionTimeout}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p, nil
}

// send writes one line to the driver's stdin.
func (p *driverProc) send(line string) error {
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// next returns the driver's next line; it fails when the driver ended or
// ctx did, or the line is an error the driver reports.
func (p *driverProc) next(ctx context.Context) (string, error) {
	select {
	case l, ok := <-p.lines:
		if !ok {
			return "", fmt.Errorf("driver ended early (%v); stderr: %s", p.cmd.Wait(), p.stderr)
		}
		if strings.HasPrefix(l, "error") {
			return "", fmt.Errorf("driver: %s; stderr: %s", l, p.stderr)
		}
		return l, nil
	case <-ctx.Done():
		return "", fmt.Errorf("driver: %w; stderr: %s", ctx.Err(), p.stderr)
	}
}

// stop closes the driver's stdin and waits for it to end. The driver
// closes its sessions then, each a quorum write, and says "closed k of n"
// as they go: with hundreds of sessions that takes longer than any fixed
// wait, so the wait runs until a session timeout has passed without a
// line from the driver, and never longer than stopCap; then it is killed.
func (p *driverProc) stop() error {
	defer p.cancel()
	p.stdin.Close()
	done := make(chan error, 1)
	progress := make(chan string, 1)
	go func() {
		for l := range p.lines {
			select {
			case <-progress: // keep only the newest
			default:
			}
			progress <- l
		}
		done <- p.cmd.Wait()
	}()
	last := "nothing"
	idle := time.NewTimer(p.idle)
	defer idle.Stop()
	bound := time.NewTimer(stopCap)
	defer bound.Stop()
	for {
		select {
		case err := <-done:
			return err
		case last = <-progress:
			idle.Reset(p.idle)
		case <-idle.C:
			p.cancel()
			return fmt.Errorf("driver said nothing for %v while closing its sessions (its last line: %q); killed (%v)", p.idle, last, <-done)
		case <-bound.C:
			p.cancel()
			return fmt.Errorf("driver still closing its sessions after %v (its last line: %q); killed (%v)", stopCap, last, <-done)
		}
	}
}

// stopCap bounds stop's wait however steadily the driver closes.
const stopCap = 3 * time.Minute

// kill ends the driver at once (its sessions then expire) and reaps it.
func (p *driverProc) kill() {
	p.cancel()
	_ = p.stop()
}

// DriverPool keeps each driven variant's process, and its sessions, alive
// across the rounds at one N: a JVM starts cold (Curator runs several
// times slower until its JIT has compiled the hot paths, which a
// long-running program has long done), and its warm-up (Driver.Warmup)
// is then paid once per N, not once per round. Between its rounds a
// process's sessions only ping. Close ends them, closing their sessions
// (a quorum write each): call it after the last round at an N, before the
// servers' counters are read for anything else.
type DriverPool struct {
	mu    sync.Mutex
	procs map[string]*driverProc
}

// NewDriverPool returns an empty pool.
func NewDriverPool() *DriverPool { return &DriverPool{procs: map[string]*driverProc{}} }

// Close ends every process of the pool and returns the first error.
func (p *DriverPool) Close() error {
	p.mu.Lock()
	procs := p.procs
	p.procs = map[string]*driverProc{}
	p.mu.Unlock()
	var first error
	for _, d := range procs {
		if err := d.stop(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (p *DriverPool) take(key string) *driverProc {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.procs[key]
	delete(p.procs, key)
	return d
}

func (p *DriverPool) put(key string, d *driverProc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.procs[key] = d
}

// runDriver is Run for a variant with a Driver: the same directory and
// lock path conventions, the servers' counters read around the
// contention (while the driver's sessions are open), the same mutual
// exclusion check; the latencies come from the driver's lines. With
// cfg.Drivers the process outlives the round.
func runDriver(ctx context.Context, cfg Config) (Result, error) {
	res := Result{Variant: cfg.Variant.Name, Contenders: cfg.Contenders, Paths: cfg.Paths, Hold: cfg.Hold, Idle: cfg.Idle, Rounds: 1, External: true}
	if cfg.Floors != nil {
		res.Floors = *cfg.Floors
	}
	if err := cfg.Variant.Driver.Available(); err != nil {
		return res, err
	}
	fail := func(err error) (Result, error) {
		return res, fmt.Errorf("bench: %s with %d contenders: %w", cfg.Variant.Name, cfg.Contenders, err)
	}
	admins, err := connectAll(ctx, cfg.Servers, 1)
	if err != nil {
		return res, err
	}
	defer closeAll(admins)
	admin := admins[0].conn()
	dir, err := makeRunDir(admin, fmt.Sprintf("%s-n%d", cfg.Variant.Name, cfg.Contenders))
	if err != nil {
		return res, err
	}
	defer deleteTree(admin, dir)
	lockPath := dir + "/lock"
	if err := cfg.makeLockPaths(admin, lockPath); err != nil {
		return fail(err)
	}
	key := fmt.Sprintf("%s/%d/%d", cfg.Variant.Name, cfg.Paths, cfg.Contenders)
	var d *driverProc
	if cfg.Drivers != nil {
		d = cfg.Drivers.take(key)
	}
	if d == nil {
		if d, err = launchDriver(ctx, cfg, lockPath); err != nil {
			return fail(err)
		}
	}
	holds, start, end, counts, err := driveRound(ctx, cfg, d, lockPath)
	if err != nil {
		d.kill()
		return fail(err)
	}
	if cfg.Drivers != nil {
		cfg.Drivers.put(key, d)
	} else if err := d.stop(); err != nil {
		return fail(err)
	}
	res.Server = counts
	if err := fillFromDriver(&res, holds, start, end, cfg.Variant.Permits, cfg.Paths); err != nil {
		return fail(err)
	}
	_, _ = admin.Sync(lockPath)
	if left := leftBehind(admin, lockPath); len(left) > 0 {
		return fail(fmt.Errorf("left %d nodes behind under %s: %v", len(left), lockPath, left))
	}
	return res, nil
}

// leftBehind lists the nodes under path that a run should not have left:
// every node that is ephemeral or has children, at any depth. Empty
// structural nodes are the peer recipe's own: Curator's semaphore keeps
// its leases and its inner lock in two persistent children of its path,
// which outlive every lease.
func leftBehind(admin *zk.Conn, path string) []string {
	kids, _, err := admin.Children(path)
	if err != nil {
		return nil
	}
	var left []string
	for _, k := range kids {
		p := path + "/" + k
		ok, st, err := admin.Exists(p)
		ephemeral := st != nil && st.EphemeralOwner != 0 && st.EphemeralOwner != math.MinInt64 // not a container
		switch {
		case err != nil || !ok || !ephemeral && st.NumChildren == 0:
			// gone meanwhile, or structure
		case st.NumChildren > 0:
			left = append(left, leftBehind(admin, p)...)
		default:
			left = append(left, p)
		}
	}
	return left
}

// launchDriver starts the variant's driver, warming up on lockPath, and
// waits until its sessions are up and it is warm ("ready"). A process of
// a pool lives on its own context, not the round's, which ends with the
// round.
func launchDriver(ctx context.Context, cfg Config, lockPath string) (*driverProc, error) {
	base := ctx
	if cfg.Drivers != nil {
		base = context.WithoutCancel(ctx)
	}
	pctx, cancel := context.WithCancel(base)
	cmd, err := cfg.Variant.Driver.Command(pctx, DriverArgs{Servers: cfg.Servers, Path: lockPath, Contenders: cfg.sessions(), Paths: cfg.Paths,
		Acquisitions: cfg.Acquisitions, Duration: cfg.Duration, Hold: cfg.Hold, Idle: cfg.Idle, Warmup: cfg.Variant.Driver.Warmup,
		Permits: cfg.Variant.Permits, Locks: cfg.Variant.Locks, Latch: cfg.Variant.Election})
	if err != nil {
		cancel()
		return nil, err
	}
	d, err := startDriver(cmd, cancel)
	if err != nil {
		cancel()
		return nil, err
	}
	if l, err := d.next(ctx); err != nil || l != "ready" {
		d.kill()
		if err == nil {
			err = unexpected(l)
		}
		return nil, err
	}
	return d, nil
}

// driveRound runs one round on a ready driver, with the servers'
// counters read on either side, and returns the holds it reported and its
// start and end.
func driveRound(ctx context.Context, cfg Config, d *driverProc, lockPath string) (holds []driverHold, start, end int64, counts ServerCounts, err error) {
	settle(ctx, cfg.Servers)
	before, err := takeSnapshot(cfg.Servers)
	if err != nil {
		return nil, 0, 0, counts, err
	}
	if cfg.OnStart != nil {
		cfg.OnStart()
	}
	if err := d.send("go " + lockPath); err != nil {
		return nil, 0, 0, counts, err
	}
	for {
		l, err := d.next(ctx)
		if err != nil {
			return holds, 0, 0, counts, err
		}
		if rest, ok := strings.CutPrefix(l, "finished "); ok {
			if _, err := fmt.Sscan(rest, &start, &end); err != nil {
				return holds, 0, 0, counts, unexpected(l)
			}
			break
		}
		h, err := parseHold(l)
		if err != nil {
			return holds, 0, 0, counts, err
		}
		holds = append(holds, h)
		if cfg.Acquired != nil {
			cfg.Acquired.Add(1)
		}
	}
	if cfg.OnStop != nil {
		cfg.OnStop()
	}
	settle(ctx, cfg.Servers)
	after, err := takeSnapshot(cfg.Servers)
	if err != nil {
		return holds, start, end, counts, err
	}
	counts, err = diff(before, after)
	return holds, start, end, counts, err
}

func unexpected(line string) error { return fmt.Errorf("unexpected line from the driver: %q", line) }

// fillFromDriver makes a round's Result out of the holds a driver
// reported and its start and end: acquire latency is acquired less
// requested; a handoff is counted, as in Run, when the next holder (in the
// order of acquisition) asked before the previous one began its release,
// from that release to the next acquired. The holds are checked for
// mutual exclusion as Run's are.
func fillFromDriver(res *Result, holds []driverHold, start, end int64, permits, paths int) error {
	slices.SortFunc(holds, func(a, b driverHold) int { return cmp.Compare(a.acquired, b.acquired) })
	acq, hand := newHistogram(), newHistogram()
	checked := make([]Hold, len(holds))
	for i, h := range holds {
		acq.record(time.Duration(h.acquired - h.requested))
		if i > 0 && h.requested < holds[i-1].released {
			hand.record(time.Duration(h.acquired - holds[i-1].released))
		}
		checked[i] = Hold{Contender: h.contender, Enter: time.Duration(h.acquired - start), Exit: time.Duration(h.released - start)}
	}
	res.Elapsed = time.Duration(end - start)
	res.Acquisitions = int64(len(holds))
	res.Holds = len(holds)
	res.hists = &runHists{acq, hand, newHistogram(), newHistogram(), newHistogram()}
	res.summarize()
	res.PerRound = []RoundFigures{res.wholeRun()}
	return checkPaths(checked, permits, paths)
}

// tailBuffer keeps the last few kilobytes a driver wrote to stderr.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tailBuffer) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	if len(w.buf) > 4096 {
		w.buf = w.buf[len(w.buf)-4096:]
	}
	return len(b), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(string(w.buf))
}
