// Package locktest is the conformance suite every lock in this module runs
// against a real ZooKeeper ensemble. It imports testing, so only tests may
// import it; the history checker it proves mutual exclusion with is
// internal/history, which the bench uses too.
//
// A variant's tests describe the variant once and hand it to Run:
//
//	func TestConformance(t *testing.T) {
//		locktest.Run(t, locktest.Variant{
//			Name: "naive",
//			New: func(s *zklocks.Session, path string, opts ...zklocks.Option) (zklocks.Locker, error) {
//				return naive.New(s, path, opts...)
//			},
//			Layout: locktest.NodeAtPath,
//		})
//	}
//
// Every behaviour of the zklocks.Locker contract is a subtest named after
// it. Mutual exclusion is judged from a recorded history.History (see
// history.Recorder and history.Check), never from a counter; "nothing left
// behind" is judged by listing the nodes of the lock path and comparing
// their ephemeralOwner with the session of the client under test. Waits
// are bounded by context deadlines; the suite polls ZooKeeper with backoff
// where it must wait for a state, and never sleeps to synchronise.
package locktest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zktest"
)

// Layout says where a variant keeps its lock nodes.
type Layout int

const (
	// NodeAtPath: the lock node is the lock path itself (naive).
	NodeAtPath Layout = iota + 1
	// ChildrenOfPath: one child of the lock path per contender (the
	// sequential family).
	ChildrenOfPath
)

func (l Layout) String() string {
	switch l {
	case NodeAtPath:
		return "NodeAtPath"
	case ChildrenOfPath:
		return "ChildrenOfPath"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Variant describes one lock implementation to the suite.
type Variant struct {
	Name string
	// New makes one contender on session s for path, with opts (the
	// suite passes zklocks.WithLogger, and an option of no variant, which
	// New must refuse with zklocks.ErrBadOption). Every variant returns
	// the module's sentinels (zklocks.ErrLocked, ...).
	New func(s *zklocks.Session, path string, opts ...zklocks.Option) (zklocks.Locker, error)
	// FIFO: contenders acquire in the order they queued (sequential family).
	FIFO bool
	// Reentrant: a contender that holds the lock may lock it again (the
	// reentrant package, whose contenders each carry an owner of their
	// own). The AlreadyLocked behaviour then checks re-entry instead: Lock
	// and TryLock by the holder succeed, keep the hold (token, Done, node)
	// and each owe one more Unlock. A second Lock while the first is still
	// waiting fails with AlreadyLocked either way.
	Reentrant bool
	// Layout: NodeAtPath (naive) or ChildrenOfPath (sequential family).
	Layout Layout
	// Expected lists the cases the variant is known to fail, by their
	// path below the suite ("BadInput", "DoneOnLoss/SessionExpired"), each
	// with a short statement of the failure it shows. Run runs a listed
	// case with a recorder in place of its *testing.T (see T): the case
	// must fail, and what it reported is logged. A listed case that passes
	// fails the run, and so does a listed path that names no case, so the
	// list can not drift from what the variant does. Only the textbook
	// lock lists any (docs/hardening.md is its ledger); every case not
	// listed must pass.
	Expected map[string]string
}

// Stater is implemented by locks that count their own traffic.
type Stater interface {
	Stats() zklocks.Stats
}

// Session timeouts the suite gives its clients. ExpirySessionTimeout is for
// the cases that wait for a session to expire; the local ensemble's 200ms
// tick allows anything from 400ms.
const (
	SessionTimeout       = zktest.DefaultSessionTimeout
	ExpirySessionTimeout = time.Second
)

// Run runs the whole suite against v. The subtests run one after another
// (goroutine-leak checks can not tell parallel tests apart).
func Run(t *testing.T, v Variant) {
	t.Helper()
	if err := v.validate(); err != nil {
		t.Fatalf("locktest: %v", err)
	}
	s := &suite{v: v}
	e := newExpectations(v.Expected)
	for _, b := range []struct {
		name string
		run  func(T)
	}{
		{"MutualExclusion", s.testMutualExclusion},
		{"TryLock", s.testTryLock},
		{"Cancel", s.testCancel},
		{"CrashRelease", s.testCrashRelease},
		{"DoneOnLoss", s.testDoneOnLoss},
		{"WaiterLoss", s.testWaiterLoss},
		{"DoneOnUnlock", s.testDoneOnUnlock},
		{"BadInput", s.testBadInput},
		{"NotLocked", s.testNotLocked},
		{"ClosedConn", s.testClosedConn},
		{"AlreadyLocked", s.testAlreadyLocked},
		{"FIFO", s.testFIFO},
		{"NoGoroutineLeak", s.testNoGoroutineLeak},
		{"Stats", s.testStats},
		{"OperationLog", s.testOperationLog},
		{"ErrorShape", s.testErrorShape},
		{"DoneBeforeItsLog", s.testDoneBeforeItsLog},
		{"HoldAfterALongWait", s.testHoldAfterALongWait},
		{"Revoke", s.testRevoke},
		{"HoldEndingAsItBegins", s.testHoldEndingAsItBegins},
	} {
		e.run(t, b.name, b.name, b.run)
	}
	for _, p := range e.unused() {
		t.Errorf("locktest: %s lists %q as an expected failure, but the suite has no such case (renamed? or nested in a case listed itself?)", v.Name, p)
	}
}

func (v Variant) validate() error {
	var missing []string
	if v.Name == "" {
		missing = append(missing, "Name")
	}
	if v.New == nil {
		missing = append(missing, "New")
	}
	if v.Layout != NodeAtPath && v.Layout != ChildrenOfPath {
		missing = append(missing, "Layout")
	}
	if len(missing) > 0 {
		return fmt.Errorf("variant %q: missing %v", v.Name, missing)
	}
	return nil
}

// suite holds the variant under test; its methods are the behaviours
// (in the other files of this package) and the helpers below.
type suite struct {
	v Variant
}

// client is one simulated process: a session and a lock on it.
type client struct {
	conn    *zk.Conn
	l       zklocks.Locker
	sid     int64         // the session the client started with
	timeout time.Duration // its session timeout
}

// newClient opens a session with the given timeout (0: SessionTimeout)
// and makes a contender on path with it.
func (s *suite) newClient(t T, path string, timeout time.Duration, opts ...zktest.ConnOption) client {
	t.Helper()
	if timeout == 0 {
		timeout = SessionTimeout
	}
	conn := zktest.Connect(t, append([]zktest.ConnOption{zktest.WithSessionTimeout(timeout)}, opts...)...)
	return client{conn: conn, l: s.newLocker(t, conn, path, timeout), sid: conn.SessionID(), timeout: timeout}
}

func (s *suite) newLocker(t T, conn *zk.Conn, path string, timeout time.Duration) zklocks.Locker {
	t.Helper()
	l, err := s.v.New(zktest.Session(t, conn), path)
	if err != nil {
		t.Fatalf("%s: New(%q): %v", s.v.Name, path, err)
	}
	return l
}

// testContext is bounded by d and ends with the test.
func testContext(t T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustLock(t T, ctx context.Context, who string, l zklocks.Locker) {
	t.Helper()
	if err := l.Lock(ctx); err != nil {
		t.Fatalf("%s: Lock: %v", who, err)
	}
}

func mustUnlock(t T, ctx context.Context, who string, l zklocks.Locker) {
	t.Helper()
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("%s: Unlock: %v", who, err)
	}
}

// nodesOf lists the lock nodes on path that belong to session sid: the
// path itself (NodeAtPath) or its children (ChildrenOfPath) whose
// ephemeralOwner is sid.
func (s *suite) nodesOf(conn *zk.Conn, path string, sid int64) ([]string, error) {
	if err := syncPath(conn, path); err != nil {
		return nil, err
	}
	candidates := []string{path}
	if s.v.Layout == ChildrenOfPath {
		kids, _, err := conn.Children(path)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("children of %s: %w", path, err)
		}
		candidates = candidates[:0]
		for _, k := range kids {
			candidates = append(candidates, path+"/"+k)
		}
	}
	var out []string
	for _, p := range candidates {
		ok, stat, err := conn.Exists(p)
		if err != nil {
			return nil, fmt.Errorf("exists %s: %w", p, err)
		}
		if ok && stat.EphemeralOwner == sid {
			out = append(out, p)
		}
	}
	return out, nil
}

// syncPath makes conn's server catch up with the leader before conn reads
// path. Without it a read on another session may be served by a follower
// that has not yet applied a write that the writer has already seen
// succeed (ZooKeeper's reads are sequentially consistent, not linearizable).
func syncPath(conn *zk.Conn, path string) error {
	if _, err := conn.Sync(path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// poll calls cond with growing pauses until it reports true, fails, or
// ctx ends.
func poll(ctx context.Context, cond func() (bool, error)) error {
	pause := 2 * time.Millisecond
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// requireNoNodes fails the test unless nothing of client c is left on
// path. It first makes one round trip on c's own connection: ZooKeeper
// answers a session's requests in order, so a create c sent before
// (say, by a Lock whose ctx ended while the create was in flight) has been
// applied by then. Then it gives background clean-up up to c's session
// timeout plus a second.
func (s *suite) requireNoNodes(t T, admin *zk.Conn, path string, c client, after string) {
	t.Helper()
	_, _, _ = c.conn.Exists(path) // flush c's pipeline; errors (closed conn) do not matter
	ctx, cancel := context.WithTimeout(t.Context(), c.timeout+time.Second)
	defer cancel()
	var left []string
	err := poll(ctx, func() (bool, error) {
		var err error
		left, err = s.nodesOf(admin, path, c.sid)
		return len(left) == 0, err
	})
	if err != nil {
		t.Fatalf("after %s: nodes of session %#x still on %s: %v (%v)", after, c.sid, path, left, err)
	}
}

// requireNodes fails the test unless session sid has a node on path now.
func (s *suite) requireNodes(t T, admin *zk.Conn, path string, sid int64, what string) []string {
	t.Helper()
	nodes, err := s.nodesOf(admin, path, sid)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(nodes) == 0 {
		t.Fatalf("%s: session %#x has no node on %s; there: %s", what, sid, path, s.describe(admin, path))
	}
	return nodes
}

// describe says, for a failure message, which nodes are on path and whose
// they are.
func (s *suite) describe(admin *zk.Conn, path string) string {
	nodes := []string{path}
	if s.v.Layout == ChildrenOfPath {
		kids, _, err := admin.Children(path)
		if err != nil {
			return fmt.Sprintf("(children of %s: %v)", path, err)
		}
		nodes = nodes[:0]
		for _, k := range kids {
			nodes = append(nodes, path+"/"+k)
		}
	}
	var out []string
	for _, p := range nodes {
		data, stat, err := admin.Get(p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			out = append(out, p+" (no node)")
		case err != nil:
			out = append(out, fmt.Sprintf("%s (%v)", p, err))
		default:
			out = append(out, fmt.Sprintf("%s owner %#x czxid %#x data %q", p, stat.EphemeralOwner, stat.Czxid, data))
		}
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, "; ")
}

// lockQueued starts c's Lock(lctx) in its own goroutine and waits (bounded
// by ctx) until the Lock is observably queued behind the current holder;
// see waitQueued. The bool is false when queueing can not be observed.
func (s *suite) lockQueued(t T, ctx, lctx context.Context, admin *zk.Conn, path string, c client) (<-chan LockResult, bool) {
	t.Helper()
	var base int64
	if st, ok := c.l.(Stater); ok {
		base = st.Stats().Requests
	}
	res := LockAsync(lctx, c.l)
	return res, s.waitQueued(t, ctx, admin, path, c, base, res)
}

// waitQueued waits until c's Lock is observably under way: its node is
// among the children (ChildrenOfPath), or, for NodeAtPath, the lock has
// sent its create and its watch (Stats().Requests >= base+2). It reports
// false at once when progress can not be observed (NodeAtPath without
// Stats), and fails the test if the Lock returns (on res) before it queued.
func (s *suite) waitQueued(t T, ctx context.Context, admin *zk.Conn, path string, c client,
	base int64, res <-chan LockResult) bool {
	t.Helper()
	var cond func() (bool, error)
	switch st, ok := c.l.(Stater); {
	case s.v.Layout == ChildrenOfPath:
		cond = func() (bool, error) {
			nodes, err := s.nodesOf(admin, path, c.sid)
			return len(nodes) > 0, err
		}
	case ok:
		cond = func() (bool, error) { return st.Stats().Requests >= base+2, nil }
	default:
		return false
	}
	err := poll(ctx, func() (bool, error) {
		if len(res) > 0 {
			r := <-res
			return false, fmt.Errorf("Lock returned (%v) while another client held the lock", r.Err)
		}
		return cond()
	})
	if err != nil {
		t.Fatalf("waiting for the contender to queue: %v", err)
	}
	return true
}

// requireClosedWithin fails the test unless ch closes within d.
func RequireClosedWithin(t testing.TB, ch <-chan struct{}, d time.Duration, what string) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-ch:
		return time.Since(start)
	case <-time.After(d):
		t.Fatalf("%s: Done() not closed within %v", what, d)
		return 0
	}
}

// IsClosed reports whether ch (a Done channel) is closed, without waiting.
func IsClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// LockResult is the outcome of a Lock run in the background: its error,
// and when it returned.
type LockResult struct {
	Err error
	At  time.Time
}

// LockAsync runs l.Lock(ctx) in its own goroutine; the channel gets its
// outcome.
func LockAsync(ctx context.Context, l zklocks.Locker) <-chan LockResult {
	ch := make(chan LockResult, 1)
	go func() {
		err := l.Lock(ctx)
		ch <- LockResult{Err: err, At: time.Now()}
	}()
	return ch
}

// AwaitLock waits for an async Lock's outcome, failing the test after d.
func AwaitLock(t testing.TB, ch <-chan LockResult, d time.Duration, who string) LockResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(d):
		t.Fatalf("%s: Lock still blocked after %v", who, d)
		return LockResult{}
	}
}
