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
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/fence"
)

// The frozen-holder test runs its first holder in a child process, this
// test binary run again with holderEnv set, so that SIGSTOP freezes the
// whole client: its lease keep-alives (etcd), its connections' readers,
// everything. A holder frozen inside this process would go on renewing
// its etcd lease from the client's own goroutines, and a PostgreSQL
// server would see nothing different either way.
const (
	holderEnv    = "RIVALS_HOLDER" // the system to hold
	holderTarget = "RIVALS_HOLDER_TARGET"
	holderLock   = "RIVALS_HOLDER_LOCK"
	holderTTL    = "RIVALS_HOLDER_TTL"
	holderStore  = "RIVALS_HOLDER_STORE"
)

// holderMsg is one line the holder process writes on its stdout. Times
// are wall-clock readings (Unix ns): parent and child share one clock.
type holderMsg struct {
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

// holderMain is the child: it takes the lock, says so, and waits in its
// critical section to be frozen and thawed. Thawed, it does what a holder
// stopped just before its write does: it writes, with the token it had,
// then releases, and reports what the store and Unlock said.
func holderMain() int {
	out := json.NewEncoder(os.Stdout)
	fail := func(err error) int {
		_ = out.Encode(holderMsg{Event: "error", Err: err.Error()})
		return 1
	}
	// The parent holds our stdin open; when it goes, so do we.
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(3) }()

	ttl, err := time.ParseDuration(os.Getenv(holderTTL))
	if err != nil {
		return fail(err)
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
	msg := holderMsg{Event: "locked", Token: l.Token(), AskedNs: asked.UnixNano(), LockedNs: time.Now().UnixNano()}
	if rl, ok := l.(*RedlockLock); ok {
		msg.UntilNs = rl.mutex.Until().UnixNano()
	}
	_ = out.Encode(msg)

	<-cont // frozen here, about to write
	res := holderMsg{Event: "resumed", ResumedNs: time.Now().UnixNano()}
	if err := store.Write(l.Token(), "A", "A's update"); err != nil {
		res.WriteErr, res.WriteStale = err.Error(), errors.Is(err, fence.ErrStaleToken)
	}
	uctx, ucancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ucancel()
	if err := l.Unlock(uctx); err != nil {
		res.UnlockErr, res.UnlockNotHeld = err.Error(), errors.Is(err, ErrNotHeld)
	}
	_ = out.Encode(res)
	return 0
}

// openLocker opens a Locker of system on target: etcd's endpoints or
// Redlock's addresses joined by commas, a Redis address, a PostgreSQL DSN.
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
	return nil, fmt.Errorf("no system %q", system)
}

// holderProc is the parent's handle on a holder process.
type holderProc struct {
	cmd    *exec.Cmd
	lines  chan holderMsg
	stderr *syncBuffer
}

// syncBuffer is the holder's stderr: written by exec's copier, read by a
// failing test while the holder may still write.
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

// startHolder starts a holder of system on target. Like the servers it
// runs in a process group of its own with the parent-death signal set;
// the test's cleanup thaws and kills it and reaps it.
func startHolder(t *testing.T, system System, target, lock string, ttl time.Duration, store string) *holderProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		holderEnv+"="+string(system),
		holderTarget+"="+target,
		holderLock+"="+lock,
		holderTTL+"="+ttl.String(),
		holderStore+"="+store)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &holderProc{cmd: cmd, lines: make(chan holderMsg, 4), stderr: &syncBuffer{}}
	cmd.Stderr = h.stderr
	if err := startProcess(cmd); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(h.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m holderMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = holderMsg{Event: "error", Err: "unreadable line: " + sc.Text()}
			}
			h.lines <- m
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for range h.lines { // the reader ends at the pipe's end
		}
		<-read
		_ = cmd.Wait()
	})
	return h
}

// signal sends sig to the holder's process group.
func (h *holderProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(-h.cmd.Process.Pid, sig); err != nil {
		t.Fatalf("signal %v to the holder: %v", sig, err)
	}
}

// next waits for the holder's next line, which must be event want.
func (h *holderProc) next(t *testing.T, want string, within time.Duration) holderMsg {
	t.Helper()
	select {
	case m, ok := <-h.lines:
		if !ok {
			t.Fatalf("holder process exited before %q; stderr:\n%s", want, h.stderr)
		}
		if m.Event != want {
			t.Fatalf("holder process: %q (%s), want %q; stderr:\n%s", m.Event, m.Err, want, h.stderr)
		}
		return m
	case <-time.After(within):
		t.Fatalf("holder process: no %q within %v; stderr:\n%s", want, within, h.stderr)
		return holderMsg{}
	}
}
