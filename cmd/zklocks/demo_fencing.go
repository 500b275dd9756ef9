package main

// zklocks demo fencing: Kleppmann's scenario on a real ensemble.
//
// Client A runs in a child process (this binary again, as "zklocks demo
// fencing-holder", a mode not listed in the usage) so that SIGSTOP can
// freeze all of it, heartbeats included, as a long GC pause or a
// descheduled VM would. Client B runs in this process. Both write to an
// internal/fence store kept in a temporary file.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/fence"
	"github.com/zklocks/zklocks/sequential"
)

const fencingHelp = `usage: zklocks demo fencing [-session 2s] [-servers host:port,...]

Replays Martin Kleppmann's fencing scenario with the sequential lock on a
real ZooKeeper ensemble, three times: against a store that checks fencing
tokens, against one that does not, and against a znode written with
zklocks.SetIfHeld (the write carries a check of the writer's lock node).

  A takes the lock and, about to write, freezes (SIGSTOP: a GC pause).
  A's session expires; ZooKeeper deletes A's node; B takes the lock and
  writes. A thaws (SIGCONT) and finishes the write it had begun, with its
  old token. The fenced store refuses it; the unfenced one lets it
  overwrite B's update; the servers refuse A's znode write, because its
  lock node is gone.

Servers come from -servers, else ZK_SERVERS, else the ensemble started by
"zklocks ensemble up"; without any, a local 3-node ensemble is started for
the demo and stopped afterwards.`

func runFencing(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newDemoFlags("fencing", fencingHelp, stderr)
	session := fs.Duration("session", 2*time.Second, "session timeout of both clients")
	switch err := fs.parse(args); {
	case errors.Is(err, errHelp):
		return nil
	case err != nil:
		return err
	}
	if *session < 400*time.Millisecond {
		return usageError{"-session must be at least 400ms (two ticks of the local ensemble)"}
	}
	addrs, stop, err := fs.ensemble(ctx, stdout)
	if err != nil {
		return err
	}
	defer stop()
	dir, err := os.MkdirTemp("", "zklocks-fencing-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	d := &fencingDemo{addrs: addrs, session: *session, self: self, log: newDemoLog(stdout)}
	results := map[string]string{}
	for _, kind := range []string{storeFenced, storeUnfenced, storeZooKeeper} {
		value, err := d.run(ctx, kind, filepath.Join(dir, kind+".json"))
		if err != nil {
			return err
		}
		results[kind] = value
	}
	d.log.printf("\nIn all three runs the lock behaved the same: ZooKeeper gave it to B only after A's\n")
	d.log.printf("session had expired. What differed is the store:\n")
	d.log.printf("  fenced:   holds %q; A's late write was refused (its token is older).\n", results[storeFenced])
	d.log.printf("  unfenced: holds %q; B's update is lost, overwritten by a holder that no longer held the lock.\n", results[storeUnfenced])
	d.log.printf("  znode:    holds %q; the servers refused A's write, made in one transaction with a\n", results[storeZooKeeper])
	d.log.printf("            check that A's lock node still existed (zklocks.SetIfHeld).\n")
	d.log.printf("A lock cannot stop a paused process from acting on a hold it has lost; the resource\n")
	d.log.printf("must check the token, or the write must carry the check of the lock (docs/fencing.md).\n")
	return nil
}

// The three stores A and B write to: a file that checks fencing tokens,
// one that checks nothing, and a znode written with zklocks.SetIfHeld.
const (
	storeFenced    = "fenced"
	storeUnfenced  = "unfenced"
	storeZooKeeper = "znode"
)

type fencingDemo struct {
	addrs   []string
	session time.Duration
	self    string
	log     *demoLog
}

// holderMsg is one line of the holder process's output.
type holderMsg struct {
	Event   string `json:"event"` // locked, resumed, error
	Err     string `json:"err,omitempty"`
	Token   int64  `json:"token,omitempty"`
	Session int64  `json:"session,omitempty"`
	Node    string `json:"node,omitempty"`

	DoneAtResume bool   `json:"done_at_resume,omitempty"`
	DoneAfterNs  int64  `json:"done_after_ns,omitempty"` // -1: not closed within the wait
	WriteErr     string `json:"write_err,omitempty"`
	UnlockErr    string `json:"unlock_err,omitempty"`
}

// run is one replay of the scenario against the store kind (a file at
// storePath, or a znode beside the lock path); it returns the value the
// store holds at the end.
func (d *fencingDemo) run(ctx context.Context, kind, storePath string) (string, error) {
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	path := "/zklocks-demo/fencing-" + hex.EncodeToString(suffix[:])
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	store, err := d.openStore(ctx, kind, storePath, path+"-data")
	if err != nil {
		return "", err
	}
	defer store.close()
	d.log.printf("\n== %s store: %s ==\n", kind, store.what)
	d.log.reset()

	// A, in its own process.
	args := append([]string{"demo", "fencing-holder",
		"-servers", strings.Join(d.addrs, ","), "-path", path, "-session", d.session.String()}, store.holderFlags...)
	cmd := exec.CommandContext(ctx, d.self, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer func() {
		stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := make(chan holderMsg, 4)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m holderMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = holderMsg{Event: "error", Err: "unreadable output: " + sc.Text()}
			}
			lines <- m
		}
	}()
	next := func(want string, within time.Duration) (holderMsg, error) {
		select {
		case m, ok := <-lines:
			switch {
			case !ok:
				return m, fmt.Errorf("holder A exited before %q", want)
			case m.Event != want:
				return m, fmt.Errorf("holder A: %s %s (wanted %q)", m.Event, m.Err, want)
			}
			return m, nil
		case <-time.After(within):
			return holderMsg{}, fmt.Errorf("holder A: no %q within %v", want, within)
		}
	}
	locked, err := next("locked", 30*time.Second)
	if err != nil {
		return "", err
	}
	d.log.say("A (pid %d): Lock() -> holds %s, fencing token %s (session %#x, timeout %v)",
		cmd.Process.Pid, path, zxid(locked.Token), locked.Session, d.session)

	// B and an observer, in this process.
	b, err := connect(ctx, d.addrs, d.session)
	if err != nil {
		return "", err
	}
	defer b.Close()
	obs, err := connect(ctx, d.addrs, d.session)
	if err != nil {
		return "", err
	}
	defer obs.Close()
	lb, err := sequential.New(b, path)
	if err != nil {
		return "", err
	}
	bres := make(chan error, 1)
	go func() { bres <- lb.Lock(ctx) }()
	if err := demoWaitQueued(ctx, obs.Conn(), path, b.ID()); err != nil {
		return "", err
	}
	d.log.say("B: Lock() -> waits: A's node is ahead of B's in the queue")
	_, _, gone, err := obs.Conn().GetW(locked.Node)
	if err != nil {
		return "", err
	}

	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return "", err
	}
	stopped := time.Now()
	d.log.say("A: inside the lock, about to write... and freezes (SIGSTOP: a stop-the-world GC pause, a swapped-out VM)")
	select {
	case ev := <-gone:
		if ev.Type != zk.EventNodeDeleted {
			return "", fmt.Errorf("observer: unexpected event %v on A's node", ev)
		}
	case <-time.After(2*d.session + 10*time.Second):
		return "", errors.New("A's node outlived its session")
	}
	d.log.say("ZooKeeper hears nothing from A for %v: it expires A's session and deletes A's node", d.session)
	select {
	case err := <-bres:
		if err != nil {
			return "", fmt.Errorf("B: Lock: %w", err)
		}
	case <-time.After(10 * time.Second):
		return "", errors.New("B: no lock 10s after A's node was deleted")
	}
	d.log.say("B: Lock() -> holds, fencing token %s (larger: a later hold)", zxid(lb.Token()))
	if err := store.writeB(ctx, b, lb); err != nil {
		return "", fmt.Errorf("B's write: %w", err)
	}
	d.log.say("B: writes %q %s -> accepted", "B's update", store.withWhat(lb.Token()))

	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		return "", err
	}
	d.log.say("A thaws (SIGCONT) after %v and finishes the write it had begun: %q %s",
		time.Since(stopped).Round(10*time.Millisecond), "A's update", store.withWhat(locked.Token))
	res, err := next("resumed", d.session+20*time.Second)
	if err != nil {
		return "", err
	}
	if res.WriteErr != "" {
		d.log.say("   store: REFUSED: %s", res.WriteErr)
	} else {
		d.log.say("   store: accepted (it checks nothing): B's update is overwritten")
	}
	switch {
	case res.DoneAtResume:
		d.log.say("A: its Done() was already closed when it resumed, but the write was past that check")
	case res.DoneAfterNs >= 0:
		d.log.say("A: its Done() closed %v after it resumed: too late to stop a write already under way",
			time.Duration(res.DoneAfterNs).Round(time.Millisecond))
	default:
		d.log.say("A: its Done() did not close")
	}
	d.log.say("A: Unlock() -> %s", res.UnlockErr)
	if err := lb.Unlock(ctx); err != nil {
		return "", fmt.Errorf("B: Unlock: %w", err)
	}
	value, err := store.report(ctx, d.log)
	if err != nil {
		return "", err
	}
	return value, nil
}

// demoWaitQueued waits until session sid has a node under path.
func demoWaitQueued(ctx context.Context, conn *zk.Conn, path string, sid int64) error {
	for {
		kids, _, err := conn.Children(path)
		if err == nil {
			for _, k := range kids {
				if _, st, err := conn.Get(path + "/" + k); err == nil && st.EphemeralOwner == sid {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("B did not queue: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// fencingHolder is client A, in the child process: it takes the lock,
// reports, and waits to be frozen. When it runs again (SIGCONT) it does
// what a process frozen in its critical section does: it carries on with
// its write, using the token it had.
func fencingHolder(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("zklocks demo fencing-holder", flag.ContinueOnError)
	servers := fs.String("servers", "", "")
	path := fs.String("path", "", "")
	storePath := fs.String("store", "", "")
	zkData := fs.String("zk-data", "", "")
	session := fs.Duration("session", 2*time.Second, "")
	writer := fs.String("writer", "A", "") // its name in the store (zklocks web names its children)
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	out := json.NewEncoder(stdout)
	fail := func(err error) error {
		_ = out.Encode(holderMsg{Event: "error", Err: err.Error()})
		return err
	}
	// The parent holds our stdin; if it goes away, so do we.
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(3) }()
	var store *fence.Store
	if *zkData == "" {
		st, err := fence.Open(*storePath)
		if err != nil {
			return fail(err)
		}
		store = st
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := connect(ctx, splitServers(*servers), *session)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	l, err := sequential.New(conn, *path)
	if err != nil {
		return fail(err)
	}
	if err := l.Lock(ctx); err != nil {
		return fail(err)
	}
	token, done := l.Token(), l.Done()
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	_ = out.Encode(holderMsg{Event: "locked", Token: token, Session: conn.ID(), Node: l.Node()})

	<-cont // frozen here by the parent, then thawed
	resumed := time.Now()
	msg := holderMsg{Event: "resumed", DoneAtResume: isClosedChan(done), DoneAfterNs: -1}
	doneAt := make(chan time.Time, 1)
	go func() { <-done; doneAt <- time.Now() }()
	value := *writer + "'s update"
	write := func() error { return store.Write(token, *writer, value) }
	if *zkData != "" {
		write = func() error { return writeIfHeld(conn, l, *zkData, []byte(value)) }
	}
	if err := write(); err != nil {
		msg.WriteErr = err.Error()
	}
	select {
	case at := <-doneAt:
		msg.DoneAfterNs = int64(at.Sub(resumed))
	case <-time.After(*session + 2*time.Second):
	}
	uctx, ucancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ucancel()
	msg.UnlockErr = "nil"
	if err := l.Unlock(uctx); err != nil {
		msg.UnlockErr = err.Error()
	}
	return out.Encode(msg)
}

// zxid shows a token with its parts: the czxid of the lock node, whose
// high 32 bits are the leader's epoch and low 32 bits a counter.
func zxid(token int64) string {
	return fmt.Sprintf("%d (czxid 0x%x: epoch %d, counter %d)", token, token, token>>32, token&0xffffffff)
}

func isClosedChan(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
