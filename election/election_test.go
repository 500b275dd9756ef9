package election_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/election"
	"github.com/zklocks/zklocks/internal/history"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// An election is a lock held for a term: it passes the suite every lock
// passes.
func TestConformance(t *testing.T) {
	locktest.Run(t, locktest.Variant{
		Name: "election",
		New: func(s *zklocks.Session, path string, opts ...zklocks.Option) (zklocks.Locker, error) {
			e, err := election.New(s, path, opts...)
			if err != nil {
				return nil, err
			}
			return e, nil
		},
		FIFO:   true,
		Layout: locktest.ChildrenOfPath,
	})
}

func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// candidates returns n candidates on path, each on a session of its own.
func candidates(t *testing.T, path string, n int) []*election.Election {
	t.Helper()
	var out []*election.Election
	for range n {
		e, err := election.New(zktest.Session(t, zktest.Connect(t)), path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestNewRejectsBadInput(t *testing.T) {
	s := zktest.Session(t, zktest.Connect(t))
	for _, tc := range []struct {
		name string
		s    *zklocks.Session
		path string
		want error
	}{
		{"NilSession", nil, "/e", zklocks.ErrNilSession},
		{"EmptyPath", s, "", zklocks.ErrBadPath},
		{"RelativePath", s, "e", zklocks.ErrBadPath},
		{"TrailingSlash", s, "/e/", zklocks.ErrBadPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := election.New(tc.s, tc.path)
			if !errors.Is(err, tc.want) || e != nil {
				t.Fatalf("New = %v, %v; want nil, %v", e, err, tc.want)
			}
		})
	}
}

// Leader names nobody before the first campaign, then the candidate that
// leads, with the value it campaigned with and its term.
func TestLeaderReportsTheValueAndTerm(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	cs := candidates(t, path, 2)
	if _, err := cs[1].Leader(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("Leader before any campaign: %v, want ErrNoLeader", err)
	}
	if err := cs[0].Campaign(ctx, []byte("host-a")); err != nil {
		t.Fatal(err)
	}
	l, err := cs[1].Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(l.Value) != "host-a" || l.Term != cs[0].Term() || l.Node != cs[0].Node() || l.Term == 0 {
		t.Fatalf("Leader = %+v; want host-a, term %d, node %s", l, cs[0].Term(), cs[0].Node())
	}
	if cs[1].Term() != 0 {
		t.Errorf("a candidate that does not lead has term %d", cs[1].Term())
	}
	if err := cs[0].Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs[1].Leader(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Errorf("Leader after the only leader resigned: %v, want ErrNoLeader", err)
	}
}

// Candidates take turns: one leads, the next leads only after it
// resigned, terms never overlap and grow (the recorded history), and
// everyone leads once.
func TestOneLeaderAtATime(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	path := zktest.LockPath(t)
	cs := candidates(t, path, 5)
	rec := history.NewRecorder()
	errs := make(chan error, len(cs))
	for i, c := range cs {
		go func() {
			if err := c.Campaign(ctx, []byte(fmt.Sprint(i))); err != nil {
				errs <- err
				return
			}
			exit := rec.Enter(fmt.Sprintf("candidate %d", i), c.Term())
			time.Sleep(20 * time.Millisecond) // a short term
			exit()
			errs <- c.Resign(ctx)
		}()
	}
	for range cs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	h := rec.History()
	if len(h) != len(cs) {
		t.Fatalf("%d terms, want %d", len(h), len(cs))
	}
	if err := history.Check(h); err != nil {
		t.Fatal(err)
	}
}

// An observer sees every term begin, in order, with the leader's value;
// candidates that join behind the leader do not wake it.
func TestObserveSeesEachTerm(t *testing.T) {
	zktest.Servers(t)       // the shared ensemble's goroutines predate the snapshot
	zktest.VerifyNoLeaks(t) // Observe's goroutine ends with its ctx
	ctx := testContext(t, 60*time.Second)
	path := zktest.LockPath(t)
	cs := candidates(t, path, 3)
	var wire atomic.Int64 // watch events that reach the observer's connection
	wconn := zktest.Connect(t, zktest.WithEventCallback(func(ev zk.Event) {
		if ev.Type != zk.EventSession && ev.Type != zk.EventNotWatching {
			wire.Add(1)
		}
	}))
	watcher, err := election.New(zktest.Session(t, wconn), path)
	if err != nil {
		t.Fatal(err)
	}
	octx, stop := context.WithCancel(ctx)
	var seen <-chan election.Leader

	next := func(what string) election.Leader {
		t.Helper()
		select {
		case l, ok := <-seen:
			if !ok {
				t.Fatalf("%s: Observe closed early", what)
			}
			return l
		case <-ctx.Done():
			t.Fatalf("%s: nothing observed", what)
		}
		return election.Leader{}
	}
	if err := cs[0].Campaign(ctx, []byte("first")); err != nil {
		t.Fatal(err)
	}
	// Observing from a term under way: the first look finds the head and
	// sets no child watch (from an empty election, see
	// TestObserveFromAnEmptyElection, the first look may leave one).
	seen = watcher.Observe(octx)
	if l := next("first term"); string(l.Value) != "first" || l.Term != cs[0].Term() {
		t.Fatalf("first term: %+v, want first at %d", l, cs[0].Term())
	}
	before, beforeWire := watcher.Stats().Notifications, wire.Load()
	waiting := make(chan error, 2)
	for i := 1; i < 3; i++ {
		go func() { waiting <- cs[i].Campaign(ctx, []byte(fmt.Sprint("candidate ", i))) }()
	}
	raw := zktest.Connect(t)
	require.Eventually(t, func() bool { return len(zktest.Children(t, raw, path)) == 3 }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // any watch their joins fired has arrived
	if n := watcher.Stats().Notifications - before; n != 0 {
		t.Errorf("two candidates joining behind the leader woke the observer %d times", n)
	}
	if n := wire.Load() - beforeWire; n != 0 {
		t.Errorf("two candidates joining behind the leader sent the observer %d watch events", n)
	}
	firstTerm := cs[0].Term()
	if err := cs[0].Resign(ctx); err != nil {
		t.Fatal(err)
	}
	second := next("second term")
	if second.Term <= firstTerm || string(second.Value) == "first" {
		t.Fatalf("second term: %+v, want a term after %d", second, firstTerm)
	}
	// The two later candidates lead in turn: each resigns once its
	// Campaign has returned.
	for range 2 {
		if err := <-waiting; err != nil {
			t.Fatal(err)
		}
		leader := cs[1]
		if cs[2].Term() != 0 {
			leader = cs[2]
		}
		if err := leader.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	for range seen { // closed once ctx ends
	}
}

// An observer started before anyone campaigns reports the first term
// when it begins.
func TestObserveFromAnEmptyElection(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	cs := candidates(t, path, 2)
	octx, stop := context.WithCancel(ctx)
	defer stop()
	seen := cs[1].Observe(octx)
	if err := cs[0].Campaign(ctx, []byte("first")); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-seen:
		if string(l.Value) != "first" || l.Term != cs[0].Term() {
			t.Fatalf("observed %+v, want first at term %d", l, cs[0].Term())
		}
	case <-ctx.Done():
		t.Fatal("the first term was never observed")
	}
	if err := cs[0].Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// The leader's session expires: its Done closes, and the next candidate
// leads with a larger term.
func TestLostSessionEndsTheTerm(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	path := zktest.LockPath(t)
	conn := zktest.Connect(t, zktest.WithSessionTimeout(time.Second))
	leader, err := election.New(zktest.Session(t, conn), path)
	if err != nil {
		t.Fatal(err)
	}
	next := candidates(t, path, 1)[0]
	if err := leader.Campaign(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	term := leader.Term()
	got := make(chan error, 1)
	go func() { got <- next.Campaign(ctx, []byte("b")) }()
	zktest.ExpireSession(t, conn)
	locktest.RequireClosedWithin(t, leader.Done(), 5*time.Second, "after the leader's session expired")
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if next.Term() <= term {
		t.Errorf("next term %d, want more than %d", next.Term(), term)
	}
	if !errors.Is(leader.Err(), zklocks.ErrLockLost) {
		t.Errorf("the old leader's Err = %v, want ErrLockLost", leader.Err())
	}
	if err := next.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// Observe's channel closes once the connection is closed: every later
// read would fail, and retrying a closed connection helps no one.
func TestObserveEndsWhenTheSessionIsClosed(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	s, err := zklocks.Connect(ctx, zktest.Servers(t), 2*time.Second, zklocks.WithZKLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	e, err := election.New(s, zktest.LockPath(t))
	if err != nil {
		t.Fatal(err)
	}
	seen := e.Observe(ctx)
	s.Close()
	closed := make(chan struct{})
	go func() {
		for range seen {
		}
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(time.Second):
		t.Fatal("Observe's channel still open 1s after Session.Close")
	}
}
