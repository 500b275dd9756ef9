package rivals

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklocks/zklocks/internal/fence"
)

// A frozen holder runs in a child process so that SIGSTOP freezes the
// whole client: its lease keep-alives (etcd), its connections' readers,
// everything. A holder frozen inside the caller's process would go on
// renewing its etcd lease from the client's own goroutines, and a
// PostgreSQL server would see nothing different either way. The fault
// test (this package's test binary run again) and zklocks demo pause
// (the zklocks binary run again) both start one with StartHolder; the
// child finds what to hold in its environment and runs RunHolder.
const (
	holderEnv    = "RIVALS_HOLDER" // the system to hold
	holderTarget = "RIVALS_HOLDER_TARGET"
	holderLock   = "RIVALS_HOLDER_LOCK"
	holderTTL    = "RIVALS_HOLDER_TTL"
	holderStore  = "RIVALS_HOLDER_STORE"
)

// HolderConfig is what a holder process holds and where it writes.
type HolderConfig struct {
	System System
	// Target is where the servers are: etcd's endpoints or Redlock's
	// addresses joined by commas, a Redis address, a PostgreSQL DSN.
	Target string
	Lock   string        // the lock's name
	TTL    time.Duration // Options.TTL of the holder's Locker
	Store  string        // an internal/fence store made with fence.Create
}

// HolderMsg is one line the holder process writes on its stdout. Times
// are wall-clock readings (Unix ns): parent and child share one clock.
type HolderMsg struct {
	Event string `json:"event"` // "locked", "resumed" or "error"
	Err   string `json:"err,omitempty"`

	// locked
	Token    int64 `json:"token,omitempty"`
	AskedNs  int64 `json:"asked_ns,omitempty"`  // just before Lock
	LockedNs int64 `json:"locked_ns,omitempty"` // just after Lock returned
	UntilNs  int64 `json:"until_ns,omitempty"`  // Redlock: the validity redsync computed

	// resumed
	ResumedNs     int64  `json:"resumed_ns,omitempty"`
	WriteErr      string `json:"write_err,omitempty"`
	WriteStale    bool   `json:"write_stale,omitempty"`
	UnlockErr     string `json:"unlock_err,omitempty"`
	UnlockNotHeld bool   `json:"unlock_not_held,omitempty"`
}

// IsHolder says whether this process was started by StartHolder, and so
// should run RunHolder instead of what it usually does.
func IsHolder() bool { return os.Getenv(holderEnv) != "" }

// RunHolder is the child: it takes the lock, says so, and waits in its
// critical section to be frozen and thawed. Thawed, it does what a holder
// stopped just before its write does: it writes, with the token it had,
// then releases, and reports what the store and Unlock said. Its lines go
// to stdout; a failure is reported there too, and returned.
func RunHolder(stdout io.Writer) error {
	out := json.NewEncoder(stdout)
	fail := func(err error) error {
		_ = out.Encode(HolderMsg{Event: "error", Err: err.Error()})
		return err
	}
	// The parent holds our stdin open; when it goes, so do we, even if
	// the parent died before it could kill us.
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(3) }()

	ttl, err := time.ParseDuration(os.Getenv(holderTTL))
	if err != nil {
		return fail(fmt.Errorf("rivals holder: %s: %w", holderTTL, err))
	}
	store, err := fence.Open(os.Getenv(holderStore))
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := openLocker(ctx, System(os.Getenv(holderEnv)), os.Getenv(holderTarget), os.Getenv(holderLock), Options{TTL: ttl})
	if err != nil {
		return fail(err)
	}
	defer l.Close()
	// Registered before the parent can know we hold, so that its SIGCONT
	// cannot come before we listen for it.
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	asked := time.Now()
	if err := l.Lock(ctx); err != nil {
		return fail(err)
	}
	msg := HolderMsg{Event: "locked", Token: l.Token(), AskedNs: asked.UnixNano(), LockedNs: time.Now().UnixNano()}
	if rl, ok := l.(*RedlockLock); ok {
		msg.UntilNs = rl.mutex.Until().UnixNano()
	}
	_ = out.Encode(msg)

	<-cont // frozen here, about to write
	res := HolderMsg{Event: "resumed", ResumedNs: time.Now().UnixNano()}
	if err := store.Write(l.Token(), "A", "A's update"); err != nil {
		res.WriteErr, res.WriteStale = err.Error(), errors.Is(err, fence.ErrStaleToken)
	}
	uctx, ucancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ucancel()
	if err := l.Unlock(uctx); err != nil {
		res.UnlockErr, res.UnlockNotHeld = err.Error(), errors.Is(err, ErrNotHeld)
	}
	return out.Encode(res)
}

// openLocker opens a Locker of system on target (see HolderConfig.Target).
func openLocker(ctx context.Context, system System, target, lock string, o Options) (Locker, error) {
	switch system {
	case SystemEtcd:
		return NewEtcdLock(ctx, strings.Split(target, ","), lock, o)
	case SystemRedis:
		return NewRedisLock(target, lock, o), nil
	case SystemRedlock:
		return NewRedlockLock(strings.Split(target, ","), lock, o), nil
	case SystemPGSession:
		return NewPGSessionLock(ctx, target, lock)
	case SystemPGXact:
		return NewPGXactLock(ctx, target, lock)
	}
	return nil, fmt.Errorf("rivals: no system %q", system)
}

// Holder is the parent's handle on a holder process.
type Holder struct {
	cmd    *exec.Cmd
	stdin  io.Closer
	lines  chan HolderMsg
	read   chan struct{} // closed when the reader of stdout is done
	stderr *syncBuffer

	closeOnce sync.Once
}

// StartHolder starts cmd as the holder of c: cmd must run a program that
// calls RunHolder when IsHolder says so (the caller's own binary, with
// whatever arguments lead it there). The configuration is passed in the
// environment. Like the servers, the holder runs in a process group of
// its own, so that a signal reaches all of it and a Ctrl-C at the
// terminal does not, with the parent-death signal set. Close it.
func StartHolder(cmd *exec.Cmd, c HolderConfig) (*Holder, error) {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env,
		holderEnv+"="+string(c.System),
		holderTarget+"="+c.Target,
		holderLock+"="+c.Lock,
		holderTTL+"="+c.TTL.String(),
		holderStore+"="+c.Store)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("rivals: holder: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		stdin.Close()
		return nil, fmt.Errorf("rivals: holder: %w", err)
	}
	h := &Holder{cmd: cmd, stdin: stdin, lines: make(chan HolderMsg, 4), read: make(chan struct{}), stderr: &syncBuffer{}}
	cmd.Stderr = h.stderr
	if err := startProcess(cmd); err != nil {
		stdin.Close()
		return nil, fmt.Errorf("rivals: start the holder: %w", err)
	}
	go func() {
		defer close(h.read)
		defer close(h.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m HolderMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = HolderMsg{Event: "error", Err: "unreadable line: " + sc.Text()}
			}
			h.lines <- m
		}
	}()
	return h, nil
}

// Pid is the holder's process id (and its process group's).
func (h *Holder) Pid() int { return h.cmd.Process.Pid }

// Freeze stops the holder's process group (SIGSTOP): a long GC pause, a
// descheduled VM. Thaw lets it run on (SIGCONT).
func (h *Holder) Freeze() error { return h.signal(syscall.SIGSTOP) }

// Thaw lets a frozen holder run on.
func (h *Holder) Thaw() error { return h.signal(syscall.SIGCONT) }

func (h *Holder) signal(sig syscall.Signal) error {
	if err := syscall.Kill(-h.Pid(), sig); err != nil {
		return fmt.Errorf("rivals: signal %v to the holder (pid %d): %w", sig, h.Pid(), err)
	}
	return nil
}

// Stderr is what the holder wrote on its stderr so far, for errors.
func (h *Holder) Stderr() string { return h.stderr.String() }

// Next waits for the holder's next line, which must be event want, for
// at most within or until ctx ends.
func (h *Holder) Next(ctx context.Context, want string, within time.Duration) (HolderMsg, error) {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case m, ok := <-h.lines:
		if !ok {
			return m, fmt.Errorf("rivals: the holder process exited before %q; stderr:\n%s", want, h.Stderr())
		}
		if m.Event != want {
			return m, fmt.Errorf("rivals: the holder process: %q (%s), want %q; stderr:\n%s", m.Event, m.Err, want, h.Stderr())
		}
		return m, nil
	case <-t.C:
		return HolderMsg{}, fmt.Errorf("rivals: the holder process: no %q within %v; stderr:\n%s", want, within, h.Stderr())
	case <-ctx.Done():
		return HolderMsg{}, fmt.Errorf("rivals: waiting for the holder's %q: %w", want, ctx.Err())
	}
}

// Close kills the holder's process group (a frozen one too: SIGKILL needs
// no thaw), reads what is left of its output and reaps it. It returns no
// error for the kill itself: ending the holder is what it is for.
func (h *Holder) Close() error {
	h.closeOnce.Do(func() {
		h.stdin.Close()
		_ = syscall.Kill(-h.Pid(), syscall.SIGKILL)
		for range h.lines { // the reader ends at the pipe's end
		}
		<-h.read
		_ = h.cmd.Wait()
	})
	return nil
}

// syncBuffer is the holder's stderr: written by exec's copier, read by a
// caller reporting a failure while the holder may still write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
