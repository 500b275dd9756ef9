//go:build unix

package faulttest

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
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/fence"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// The pause test runs the holder in a child process, this test binary run
// again with childEnv set, so that SIGSTOP freezes all of it: its
// goroutines, its heartbeats, its lease renewals. That is what a long GC
// pause or a descheduled VM does to a real client (docs/05-failure-modes.md), and
// what no in-process stall can imitate: an in-process holder's ZooKeeper
// client would keep its session alive.
const (
	childEnv     = "FAULTTEST_CHILD"
	childServers = "FAULTTEST_SERVERS"
	childPath    = "FAULTTEST_PATH"
	childVariant = "FAULTTEST_VARIANT"
	childStore   = "FAULTTEST_STORE"
	childTimeout = "FAULTTEST_SESSION_TIMEOUT"
)

// childMsg is one line the child writes on its stdout.
type childMsg struct {
	Event string `json:"event"` // "locked", "resumed" or "error"
	Err   string `json:"err,omitempty"`
	// locked
	Token    int64 `json:"token,omitempty"`
	Session  int64 `json:"session,omitempty"`
	SyncSent int64 `json:"sync_sent_unix_ns,omitempty"` // wall clock of the last request before the pause
	// resumed
	DoneAtResume bool   `json:"done_at_resume,omitempty"`
	DoneAfterNs  int64  `json:"done_after_ns,omitempty"` // -1: not within the wait
	WriteErr     string `json:"write_err,omitempty"`
	WriteStale   bool   `json:"write_stale,omitempty"`
	UnlockErr    string `json:"unlock_err,omitempty"`
	UnlockLost   bool   `json:"unlock_lost,omitempty"`
}

// childMain is the holder: it takes the lock, tells the parent, and waits
// to be frozen and thawed. When it runs again (SIGCONT) it does what a
// holder frozen in the middle of its critical section does: it writes, with
// the token it had. Then it reports whether its Done had closed, what
// the store said, and what Unlock said.
func childMain() int {
	out := json.NewEncoder(os.Stdout)
	fail := func(err error) int {
		_ = out.Encode(childMsg{Event: "error", Err: err.Error()})
		return 1
	}
	// The parent holds our stdin; if it goes away, so do we.
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(3) }()

	st, err := time.ParseDuration(os.Getenv(childTimeout))
	if err != nil {
		return fail(err)
	}
	v := variantNamed(os.Getenv(childVariant))
	if v == nil {
		return fail(fmt.Errorf("unknown variant %q", os.Getenv(childVariant)))
	}
	store, err := fence.Open(os.Getenv(childStore))
	if err != nil {
		return fail(err)
	}
	conn, events, err := zk.Connect(strings.Split(os.Getenv(childServers), ","), st, zk.WithLogInfo(false),
		zk.WithLogger(quiet{}))
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	go func() {
		for range events { // go-zookeeper drops events nobody reads
		}
	}()
	path := os.Getenv(childPath)
	l, err := v.make(conn, path, st, nil)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(v.ctx(context.Background(), "A"), 30*time.Second)
	defer cancel()
	if err := l.Lock(ctx); err != nil {
		return fail(err)
	}
	token, done := l.Token(), l.Done()
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	sent := time.Now()
	if _, err := conn.Sync(path); err != nil {
		return fail(err)
	}
	_ = out.Encode(childMsg{Event: "locked", Token: token, Session: conn.SessionID(), SyncSent: sent.UnixNano()})

	// In the critical section, about to write: the parent freezes us here.
	<-cont
	resumed := time.Now()
	msg := childMsg{Event: "resumed", DoneAtResume: locktest.IsClosed(done), DoneAfterNs: -1}
	doneAt := make(chan time.Time, 1)
	go func() { <-done; doneAt <- time.Now() }()
	if err := store.Write(token, "A", "A's update"); err != nil {
		msg.WriteErr, msg.WriteStale = err.Error(), errors.Is(err, fence.ErrStaleToken)
	}
	select {
	case at := <-doneAt:
		msg.DoneAfterNs = int64(at.Sub(resumed))
	case <-time.After(st + 2*time.Second):
	}
	uctx, ucancel := context.WithTimeout(v.ctx(context.Background(), "A"), 10*time.Second)
	defer ucancel()
	if err := l.Unlock(uctx); err != nil {
		msg.UnlockErr = err.Error()
		msg.UnlockLost = errors.Is(err, zklocks.ErrLockLost) || errors.Is(err, zklocks.ErrNotLocked)
	}
	_ = out.Encode(msg)
	return 0
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// child is the parent's handle on a holder process.
type child struct {
	cmd    *exec.Cmd
	lines  chan childMsg
	stderr *bytes.Buffer
}

func startChild(t *testing.T, v *variant, path, store string, st time.Duration) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		childEnv+"=holder",
		childServers+"="+strings.Join(zktest.Servers(t), ","),
		childPath+"="+path,
		childVariant+"="+v.name,
		childStore+"="+store,
		childTimeout+"="+st.String())
	cmd.SysProcAttr = childSysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, lines: make(chan childMsg, 4), stderr: &bytes.Buffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m childMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = childMsg{Event: "error", Err: "unreadable line: " + sc.Text()}
			}
			c.lines <- m
		}
	}()
	return c
}

func (c *child) next(t *testing.T, want string, within time.Duration) childMsg {
	t.Helper()
	select {
	case m, ok := <-c.lines:
		if !ok {
			t.Fatalf("holder process exited before %q; stderr:\n%s", want, c.stderr)
		}
		if m.Event != want {
			t.Fatalf("holder process: got %q (%s), want %q; stderr:\n%s", m.Event, m.Err, want, c.stderr)
		}
		return m
	case <-time.After(within):
		t.Fatalf("holder process: no %q within %v; stderr:\n%s", want, within, c.stderr)
		return childMsg{}
	}
}

// A holder process frozen (SIGSTOP) in its critical section for longer
// than its session timeout, Kleppmann's scenario: the waiter B gets the
// lock once the holder's session can have expired, and writes; then the
// holder A thaws (SIGCONT) and, as a frozen process does, carries on with
// the write it was about to make, with its old token. The fenced store
// refuses it; A's Done is already closed or closes at once; its Unlock
// reports the loss. For sequential, the same run against an unfenced store
// shows the lost update: A's stale write silently replaces B's.
func TestPausedHolder(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v *variant) {
		modes := []fence.Mode{fence.Fenced}
		if v.name == "sequential" {
			modes = append(modes, fence.Unfenced)
		}
		for _, mode := range modes {
			t.Run(mode.String(), func(t *testing.T) { testPausedHolder(t, v, mode) })
		}
	})
}

func testPausedHolder(t *testing.T, v *variant, mode fence.Mode) {
	ctx := testCtx(t, 90*time.Second)
	tp := newTape()
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	storePath := filepath.Join(t.TempDir(), "store.json")
	store, err := fence.Create(storePath, mode)
	if err != nil {
		t.Fatal(err)
	}
	st := expiryTimeout
	a := startChild(t, v, path, storePath, st)
	locked := a.next(t, "locked", 30*time.Second)
	aEnter := tp.now() // no earlier than the child's Lock returned
	syncSent := tp.at(time.Unix(0, locked.SyncSent))

	b := newClient(t, tp, v, path, "B")
	bres := lockAsync(ctx, b)
	waitQueued(t, admin, b)

	stopAt := tp.now()
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	r := locktest.AwaitLock(t, bres, 2*st+10*time.Second, "B")
	if r.Err != nil {
		t.Fatalf("B: Lock while A is frozen: %v", r.Err)
	}
	bEnter := tp.at(r.At)
	bh := tp.enterAt(b, bEnter)
	aEnd := syncSent + v.minHold(st) // the earliest the servers can have taken the lock from A
	if bEnter < aEnd-clockSlack {
		t.Errorf("B got the lock %v after A's last request, before A's session (timeout %v) could have expired",
			bEnter-syncSent, st)
	}
	tokB := b.l.Token()
	if tokB <= locked.Token {
		t.Errorf("B's token %d is not larger than A's %d", tokB, locked.Token)
	}
	if err := store.Write(tokB, "B", "B's update"); err != nil {
		t.Fatalf("B's write: %v", err)
	}

	contAt := tp.now()
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	res := a.next(t, "resumed", st+20*time.Second)
	state, err := store.State()
	if err != nil {
		t.Fatal(err)
	}
	switch mode {
	case fence.Fenced:
		if !res.WriteStale {
			t.Errorf("A's write after the pause: %q; want %v", res.WriteErr, fence.ErrStaleToken)
		}
		if state.Value != "B's update" {
			t.Errorf("store holds %q; want B's update", state.Value)
		}
	case fence.Unfenced:
		if res.WriteErr != "" {
			t.Errorf("A's write to the unfenced store: %s", res.WriteErr)
		}
		if state.Value != "A's update" {
			t.Errorf("unfenced store holds %q; the lost update (A's stale write over B's) did not happen", state.Value)
		}
	}
	doneAfter := time.Duration(res.DoneAfterNs)
	switch {
	case res.DoneAtResume:
		doneAfter = 0
	case res.DoneAfterNs < 0:
		t.Errorf("A: Done still open %v after it resumed", st+2*time.Second)
	case doneAfter > lossSlack:
		t.Errorf("A: Done closed %v after it resumed; want at once (within %v)", doneAfter, lossSlack)
	}
	if !res.UnlockLost {
		t.Errorf("A: Unlock after the pause: %q; want %v or %v", res.UnlockErr, zklocks.ErrLockLost, zklocks.ErrNotLocked)
	}
	if locktest.IsClosed(b.l.Done()) {
		t.Error("B: Done closed after A came back")
	}
	tp.leave(bh, stillHeld)
	if err := b.l.Unlock(b.ctx(ctx)); err != nil {
		t.Errorf("B: Unlock: %v", err)
	}
	// A's hold ends, at the earliest, when the servers could have taken it.
	tp.mu.Lock()
	tp.holds = append(tp.holds, &holdRec{c: &client{name: "A", path: path}, token: locked.Token,
		enter: aEnter, exit: max(aEnter, aEnd), done: stillHeld})
	tp.mu.Unlock()
	holds, double, _ := checkHistory(t, tp, v, path)
	belief := contAt + doneAfter - aEnd // how long A believed past the earliest expiry
	left := nodesLeft(t, admin, v, path, st+2*time.Second)
	write := "rejected"
	if res.WriteErr == "" {
		write = "accepted"
	}
	fault := "pause"
	if mode == fence.Unfenced {
		fault = "pause-unfenced"
	}
	report{fault: fault, variant: v.name, holds: holds, double: double, left: left,
		recover: bEnter - stopAt, belief: belief, extra: []string{
			"paused=" + (contAt - stopAt).Round(time.Millisecond).String(),
			"session=" + st.String(),
			"done_after_resume=" + doneAfter.Round(time.Millisecond).String(),
			"stale_write=" + write,
			fmt.Sprintf("store_value=%s", strconv.Quote(state.Value)),
		}}.log(t)
}
