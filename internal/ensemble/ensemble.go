package ensemble

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrClosed is returned by the methods of an Ensemble after Close.
var ErrClosed = errors.New("ensemble: closed")

// errPortTaken marks a start that failed because another process bound
// one of the ports first; Start then tries again with new ports.
var errPortTaken = errors.New("ensemble: port already in use")

const logTailLines = 30

// Ensemble is a running local ZooKeeper ensemble. Its methods are safe for
// concurrent use; the ones that change a member (Stop, Kill, Restart,
// StartStopped, Close) run one at a time.
type Ensemble struct {
	cfg     Config
	inst    installation
	dir     string
	version string
	members []*member // fixed after Start; member.proc guarded by mu
	links   *links    // with ProxiedLinks, else nil

	mu     sync.Mutex
	closed bool
}

// Member describes one member, for tools that must find it again later
// (the command line's state file).
type Member struct {
	ID           int    // ZooKeeper's myid (index+1)
	Addr         string // client address host:port
	QuorumPort   int
	ElectionPort int
	Dir          string // data, configuration and logs
	LogFile      string
	PID          int // 0 when not running
}

// Start launches cfg.Size members and blocks until a leader is elected and
// every member answers srvr as leader or follower, ctx is done, or
// cfg.StartTimeout passes. On failure it kills whatever it started and
// returns an error holding the tail of the failing member's log; when no
// installation is found the error wraps ErrNoZooKeeper.
func Start(ctx context.Context, cfg Config) (*Ensemble, error) {
	cfg = cfg.withDefaults()
	inst, err := findInstallation(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		e, err := start(ctx, cfg, inst)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == 3 || ctx.Err() != nil {
			return e, err
		}
	}
}

func start(ctx context.Context, cfg Config, inst installation) (*Ensemble, error) {
	if err := os.MkdirAll(cfg.BaseDir, 0o755); err != nil {
		return nil, fmt.Errorf("ensemble: %w", err)
	}
	dir, err := os.MkdirTemp(cfg.BaseDir, "zklocks-ensemble-")
	if err != nil {
		return nil, fmt.Errorf("ensemble: %w", err)
	}
	e := &Ensemble{cfg: cfg, inst: inst, dir: dir}
	ports, err := freePorts(3 * cfg.Size)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	switch {
	case cfg.Hosts != nil && len(cfg.Hosts) != cfg.Size:
		os.RemoveAll(dir)
		return nil, fmt.Errorf("ensemble: %d hosts for %d members", len(cfg.Hosts), cfg.Size)
	case cfg.Hosts != nil && cfg.ProxiedLinks:
		os.RemoveAll(dir)
		return nil, errors.New("ensemble: ProxiedLinks relays on the loopback interface; it does not go with Hosts")
	}
	for i := range cfg.Size {
		host := "127.0.0.1"
		if cfg.Hosts != nil {
			host = cfg.Hosts[i]
		}
		e.members = append(e.members, &member{
			id:           i + 1,
			host:         host,
			dir:          filepath.Join(dir, fmt.Sprintf("member-%d", i+1)),
			clientPort:   ports[3*i],
			quorumPort:   ports[3*i+1],
			electionPort: ports[3*i+2],
		})
	}
	if cfg.ProxiedLinks {
		if e.links, err = newLinks(e.members); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	groups := [][]*member{e.members}
	if n := len(e.members); cfg.LastJoinsLate && n >= 3 {
		groups = [][]*member{e.members[:n-1], e.members[n-1:]}
	}
	for _, g := range groups {
		if err = e.launchAndWait(ctx, g, true); err != nil {
			break
		}
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	st, err := e.status(e.members[0])
	if err != nil {
		e.Close()
		return nil, err
	}
	e.version = st.Version
	return e, nil
}

// launchAndWait starts ms (writing their files first when fresh) and waits
// until the whole ensemble serves. On failure the members in ms are killed
// and the error holds the log tail of the member that failed.
func (e *Ensemble) launchAndWait(ctx context.Context, ms []*member, fresh bool) error {
	for _, m := range ms {
		if fresh {
			if err := m.writeFiles(e.cfg, e.members); err != nil {
				return err
			}
		}
		if err := m.launch(e.cfg, e.inst, e.dir); err != nil {
			e.killAll(ms)
			return err
		}
	}
	err := e.waitServing(ctx, ms, fresh)
	if err != nil {
		e.killAll(ms)
	}
	return err
}

func (e *Ensemble) killAll(ms []*member) {
	for _, m := range ms {
		_ = m.signal(syscall.SIGKILL, 10*time.Second)
	}
}

// WaitServing blocks until every running member answers srvr as leader or
// follower and one of them is the leader (after a Kill of the leader, for
// example), or ctx is done.
func (e *Ensemble) WaitServing(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	return e.waitServing(ctx, nil, false)
}

// waitServing polls srvr until every running member serves and one leads.
// A member of launched that exits meanwhile fails the wait; any other
// member that is not running was stopped on purpose and is left out.
//
// With portsNew (a first start, on ports picked just before), a launched
// member whose log shows that it could not bind one of its ports fails
// the wait at once, as errPortTaken, so that Start tries new ports while
// its time lasts: such a member never serves (a leader that can not bind
// its quorum port goes back to electing, again and again).
func (e *Ensemble) waitServing(ctx context.Context, launched []*member, portsNew bool) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for round := 1; ; round++ {
		var (
			notReady *member
			lastErr  error
			leaders  int
		)
		for _, m := range e.members {
			if m.proc == nil {
				continue // never started or deliberately stopped
			}
			select {
			case <-m.proc.done:
				if slices.Contains(launched, m) {
					return e.memberError(m, fmt.Sprintf("exited during start-up (%v)", m.proc.err), nil)
				}
				continue // stopped or killed on purpose
			default:
			}
			st, err := e.status(m)
			switch {
			case err != nil:
				notReady, lastErr = m, err
			case !st.Serving():
				notReady, lastErr = m, errors.New("not serving requests yet")
			case st.Mode == "leader" || st.Mode == "standalone":
				leaders++
			}
		}
		if notReady == nil && leaders > 0 {
			return nil
		}
		if portsNew && round%20 == 0 { // about once a second: the logs are read whole
			for _, m := range launched {
				if bindFailed(m.tail(1 << 16)) {
					return e.memberError(m, "could not bind one of its ports", nil)
				}
			}
		}
		select {
		case <-ctx.Done():
			if notReady == nil {
				return fmt.Errorf("ensemble: no leader elected: %w", ctx.Err())
			}
			return e.memberError(notReady, fmt.Sprintf("not serving (last srvr: %v)", lastErr), ctx.Err())
		case <-tick.C:
		}
	}
}

// memberError describes a member that failed, with the tail of its logs.
func (e *Ensemble) memberError(m *member, what string, cause error) error {
	tail := m.tail(logTailLines)
	err := fmt.Errorf("ensemble: member %d (%s) %s\n%s", m.id, m.addr(), what, tail)
	// The whole log, not the tail: a member that could not bind its
	// quorum port as leader goes back to electing, and its election lines
	// soon push the bind failure out of the last lines.
	if bindFailed(m.tail(1 << 16)) {
		err = fmt.Errorf("%w; %w", errPortTaken, err)
	}
	if cause != nil {
		err = fmt.Errorf("%w: %w", err, cause)
	}
	return err
}

// bindFailed reports whether a member's log tells that it could not bind
// one of its ports: another process took it first.
func bindFailed(log string) bool {
	for _, sign := range []string{"Address already in use", "BindException", "failed to initialize any of the following sockets"} {
		if strings.Contains(log, sign) {
			return true
		}
	}
	return false
}

// Config returns the configuration the ensemble runs with, defaults filled in.
func (e *Ensemble) Config() Config { return e.cfg }

// Version returns the ZooKeeper version the members report in srvr.
func (e *Ensemble) Version() string { return e.version }

// Dir returns the ensemble's temporary directory (one sub-directory per
// member); Close removes it.
func (e *Ensemble) Dir() string { return e.dir }

// Size returns the number of members.
func (e *Ensemble) Size() int { return len(e.members) }

// Servers returns the members' client addresses, host:port, in member order.
func (e *Ensemble) Servers() []string {
	s := make([]string, len(e.members))
	for i, m := range e.members {
		s[i] = m.addr()
	}
	return s
}

// ConnectString returns the client addresses joined by commas, the form of
// ZK_SERVERS and of ZooKeeper's connect strings.
func (e *Ensemble) ConnectString() string { return strings.Join(e.Servers(), ",") }

// Members describes every member, running or not.
func (e *Ensemble) Members() []Member {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Member, len(e.members))
	for i, m := range e.members {
		out[i] = Member{ID: m.id, Addr: m.addr(), QuorumPort: m.quorumPort, ElectionPort: m.electionPort,
			Dir: m.dir, LogFile: m.logFile()}
		if m.running() {
			out[i].PID = m.proc.cmd.Process.Pid
		}
	}
	return out
}

// PID returns the process id of member i's JVM, or 0 when it is not running.
func (e *Ensemble) PID(i int) int {
	if err := e.check(i); err != nil {
		return 0
	}
	return e.Members()[i].PID
}

// Running reports whether member i's JVM is running.
func (e *Ensemble) Running(i int) bool { return e.PID(i) != 0 }

// Leader returns the index of the member that reports Mode: leader in
// srvr (or the standalone server of a one-member ensemble). It does not
// wait for an election; see WaitServing.
func (e *Ensemble) Leader() (int, error) {
	var errs []error
	for i, m := range e.members {
		st, err := e.status(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if st.Mode == "leader" || st.Mode == "standalone" {
			return i, nil
		}
	}
	return -1, fmt.Errorf("ensemble: no member is the leader: %w", errors.Join(errs...))
}

// Mntr returns member i's mntr counters.
func (e *Ensemble) Mntr(i int) (Metrics, error) {
	if err := e.check(i); err != nil {
		return nil, err
	}
	out, err := fourLetter(e.cfg.Dial, e.members[i].addr(), "mntr")
	if err != nil {
		return nil, err
	}
	return ParseMntr(out), nil
}

// status asks member m for srvr, through Config.Dial.
func (e *Ensemble) status(m *member) (Status, error) {
	out, err := fourLetter(e.cfg.Dial, m.addr(), "srvr")
	if err != nil {
		return Status{}, err
	}
	return parseSrvr(out)
}

func (e *Ensemble) check(i int) error {
	if i < 0 || i >= len(e.members) {
		return fmt.Errorf("ensemble: no member %d (size %d)", i, len(e.members))
	}
	return nil
}

// Stop sends SIGTERM to member i and blocks until its JVM has exited
// (killing it after 10s). The member keeps its data for Restart.
func (e *Ensemble) Stop(i int) error { return e.terminate(i, syscall.SIGTERM) }

// Kill sends SIGKILL to member i, a crash, and blocks until its JVM is gone.
func (e *Ensemble) Kill(i int) error { return e.terminate(i, syscall.SIGKILL) }

func (e *Ensemble) terminate(i int, sig syscall.Signal) error {
	if err := e.check(i); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	m := e.members[i]
	if !m.running() {
		if m.proc == nil {
			return fmt.Errorf("ensemble: member %d is not running", i)
		}
		// Stopped on purpose, or it exited by itself: its log says which.
		return e.memberError(m, fmt.Sprintf("is not running (exited: %v)", m.proc.err), nil)
	}
	return m.signal(sig, 10*time.Second)
}

// Restart starts member i again after Stop or Kill, with the same data
// directory and ports, and blocks until it serves again (as follower or
// leader) and the ensemble has a leader, or Config.StartTimeout passes.
func (e *Ensemble) Restart(i int) error {
	if err := e.check(i); err != nil {
		return err
	}
	return e.restart([]int{i})
}

// StartStopped restarts every member that Stop or Kill took down, as
// Restart does; it does nothing when all members run. Fault tests that
// share an ensemble call it when they finish.
func (e *Ensemble) StartStopped() error { return e.restart(nil) }

func (e *Ensemble) restart(idx []int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	var ms []*member
	if idx == nil {
		for _, m := range e.members {
			if !m.running() {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			return nil
		}
	}
	for _, i := range idx {
		if e.members[i].running() {
			return fmt.Errorf("ensemble: member %d is running; Stop or Kill it first", i)
		}
		ms = append(ms, e.members[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.StartTimeout)
	defer cancel()
	return e.launchAndWait(ctx, ms, false)
}

// Close kills every JVM the ensemble started, waits for them to exit and
// removes the temporary directory. It is safe to call more than once.
func (e *Ensemble) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	for _, m := range e.members {
		errs = append(errs, m.signal(syscall.SIGKILL, 10*time.Second))
	}
	if e.links != nil {
		e.links.close()
	}
	if err := os.RemoveAll(e.dir); err != nil {
		errs = append(errs, fmt.Errorf("ensemble: %w", err))
	}
	return errors.Join(errs...)
}
