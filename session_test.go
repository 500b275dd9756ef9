package zklocks_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
)

func TestMain(m *testing.M) { zktest.MainWithExamples(m) }

// connect is zklocks.Connect for a test: quiet, bounded, closed at the end.
func connect(t *testing.T, timeout time.Duration, opts ...zklocks.ConnectOption) *zklocks.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s, err := zklocks.Connect(ctx, zktest.Servers(t), timeout, append([]zklocks.ConnectOption{zklocks.WithZKLogger(nil)}, opts...)...)
	if err != nil {
		t.Fatalf("Connect(%v): %v", timeout, err)
	}
	t.Cleanup(s.Close)
	return s
}

// The servers clamp the timeout a client asks for to their bounds
// ([2, 20] ticks by default; the local ensemble allows up to 60s), and the
// locks' arithmetic must use what they granted. The bounds are the
// servers' own, so the test asks on either side of them: two asks below
// the minimum get the same grant, above the asks; two above the maximum
// get the same grant, below the asks; and a grant between them is
// granted as asked.
func TestConnectLearnsTheGrantedTimeout(t *testing.T) {
	tiny, tinier := connect(t, 10*time.Millisecond).Timeout(), connect(t, time.Millisecond).Timeout()
	if tiny != tinier || tiny <= 10*time.Millisecond {
		t.Errorf("asked 10ms and 1ms: granted %v and %v; want one minimum above both", tiny, tinier)
	}
	huge, huger := connect(t, time.Hour).Timeout(), connect(t, 2*time.Hour).Timeout()
	if huge != huger || huge >= time.Hour {
		t.Errorf("asked 1h and 2h: granted %v and %v; want one maximum below both", huge, huger)
	}
	if between := 2 * tiny; between < huge {
		if got := connect(t, between).Timeout(); got != between {
			t.Errorf("asked %v, within [%v, %v]: granted %v", between, tiny, huge, got)
		}
	}
}

// go-zookeeper's log goes where WithZKLogger says, the line Connect reads
// the grant from included.
func TestConnectPassesTheLogOn(t *testing.T) {
	l := &lines{}
	connect(t, 2*time.Second, zklocks.WithZKLogger(l))
	if l.count() == 0 {
		t.Error("WithZKLogger's logger got no line of the connection's log")
	}
}

// Connect waits for a session only as long as ctx allows, and leaves no
// connection behind when ctx ends first.
func TestConnectHonoursCtx(t *testing.T) {
	zktest.VerifyNoLeaksWithin(t, 3*time.Second) // the background close takes go-zookeeper a second
	ln, err := net.Listen("tcp", "127.0.0.1:0")  // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, err := zklocks.Connect(ctx, []string{ln.Addr().String()}, 2*time.Second, zklocks.WithZKLogger(nil))
	if !errors.Is(err, context.DeadlineExceeded) || s != nil {
		t.Fatalf("Connect to a silent server = %v, %v; want context.DeadlineExceeded", s, err)
	}
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Errorf("Connect returned %v after a 300ms ctx", took)
	}
}

func TestNewSessionChecksItsInput(t *testing.T) {
	conn := zktest.Connect(t)
	for _, tc := range []struct {
		name string
		conn *zk.Conn
		opts []zklocks.SessionOption
		want error
	}{
		{"NilConn", nil, []zklocks.SessionOption{zklocks.WithSessionTimeout(time.Second)}, zklocks.ErrNilConn},
		{"NoTimeout", conn, nil, zklocks.ErrBadOption},
		{"ZeroTimeout", conn, []zklocks.SessionOption{zklocks.WithSessionTimeout(0)}, zklocks.ErrBadOption},
		{"NegativeTimeout", conn, []zklocks.SessionOption{zklocks.WithSessionTimeout(-time.Second)}, zklocks.ErrBadOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s, err := zklocks.NewSession(tc.conn, tc.opts...); !errors.Is(err, tc.want) || s != nil {
				t.Errorf("NewSession = %v, %v; want %v", s, err, tc.want)
			}
		})
	}
	s, err := zklocks.NewSession(conn, zklocks.WithSessionTimeout(zktest.DefaultSessionTimeout))
	if err != nil || s.Timeout() != zktest.DefaultSessionTimeout || s.Conn() != conn || s.ID() != conn.SessionID() {
		t.Fatalf("NewSession = %+v, %v; want a session of conn with its timeout", s, err)
	}
}

// Session.Done is about the session the connection has now: it closes
// when that session ends (here the cut that starves it gives it up
// first, then it expires), and the next session, once proven alive, has
// a Done of its own.
func TestSessionDoneClosesWhenItEndsAndTheNextSessionHasItsOwn(t *testing.T) {
	conn := zktest.Connect(t, zktest.WithSessionTimeout(time.Second))
	s := zktest.Session(t, conn)
	done := s.Done()
	if err := s.Err(); err != nil {
		t.Fatalf("Err on a fresh session = %v, want nil", err)
	}
	zktest.ExpireSession(t, conn)
	waitClosed(t, done, 5*time.Second, "Done of the expired session")
	next := awaitOpen(t, s, 10*time.Second)
	if next == done {
		t.Fatal("the new session's Done is the old one's")
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err on the new session = %v, want nil", err)
	}
}

// A client cut off from the ensemble gives the session up before the
// servers can expire it: Done closes less than a session timeout after
// the cut.
func TestSessionDoneClosesWhenCutOff(t *testing.T) {
	const timeout = 2 * time.Second
	cut := zktest.NewCutter()
	s := zktest.Connected(t, zktest.WithDialer(cut.Dialer()), zktest.WithSessionTimeout(timeout))
	done := s.Done()
	start := time.Now()
	cut.Silence()
	defer cut.Heal()
	waitClosed(t, done, 2*timeout, "Done of the silenced session")
	if took := time.Since(start); took >= timeout {
		t.Errorf("Done closed %v after the cut; want less than the session timeout %v", took, timeout)
	}
	if err := s.Err(); !errors.Is(err, zklocks.ErrSessionLost) || !errors.Is(err, zklocks.ErrCutOff) {
		t.Errorf("Err when cut off = %v, want ErrSessionLost and ErrCutOff", err)
	}
}

func TestSessionDoneClosesOnClose(t *testing.T) {
	s := connect(t, 2*time.Second)
	done := s.Done()
	s.Close()
	waitClosed(t, done, 5*time.Second, "Done of the closed session")
	if err := s.Err(); !errors.Is(err, zklocks.ErrSessionLost) || !errors.Is(err, zk.ErrClosing) {
		t.Errorf("Err after Close = %v, want ErrSessionLost and zk.ErrClosing", err)
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, within time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(within):
		t.Fatalf("%s still open after %v", what, within)
	}
}

// awaitOpen polls s.Done until it is an open channel: the session proven
// alive again.
func awaitOpen(t *testing.T, s *zklocks.Session, within time.Duration) <-chan struct{} {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ch := s.Done()
		select {
		case <-ch:
		default:
			return ch
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session proven alive %v after the expiry (Err %v)", within, s.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lines is a zk.Logger that counts what it is given.
type lines struct {
	mu sync.Mutex
	n  int
}

func (l *lines) Printf(string, ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
}

func (l *lines) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// Close ends every hold on the session before it closes the connection,
// whose closeSession makes the servers delete the holds' nodes: when
// Close returns, each hold's Done is closed already, and says why.
func TestCloseEndsEveryHoldFirst(t *testing.T) {
	s := connect(t, 2*time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	m, err := sequential.New(s, zktest.LockPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	select {
	case <-m.Done():
	default:
		t.Fatal("Done still open after Session.Close returned")
	}
	if err := m.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) || !errors.Is(err, zk.ErrClosing) {
		t.Errorf("Unlock after Close = %v, want ErrLockLost and zk.ErrClosing", err)
	}
}

// Close returns only once every hold's Done has closed: the servers hand
// each lock over as soon as the connection is closed, and with thousands
// of holds on the session, monitors left to notice on their own would
// still look held to their owners while a waiter already holds.
func TestCloseEndsThousandsOfHoldsBeforeAnyWaiterHolds(t *testing.T) {
	const holds, sampled = 10000, 16
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	a, b := connect(t, 4*time.Second), connect(t, 4*time.Second)
	root := zktest.LockPath(t)
	locks := make([]*sequential.Mutex, holds)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(256)
	for i := range locks {
		g.Go(func() error {
			m, err := sequential.New(a, fmt.Sprintf("%s/%d", root, i))
			if err != nil {
				return err
			}
			locks[i] = m
			return m.Lock(gctx)
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	type waiter struct {
		held   <-chan struct{} // A's hold's Done, taken while it holds
		locked <-chan locktest.LockResult
	}
	var ws []waiter
	for i := 0; i < holds; i += holds / sampled {
		m, err := sequential.New(b, fmt.Sprintf("%s/%d", root, i))
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, waiter{held: locks[i].Done(), locked: locktest.LockAsync(ctx, m)})
	}
	for _, w := range ws {
		if locktest.IsClosed(w.held) {
			t.Fatal("a hold of A ended before Close")
		}
	}
	// Every waiter must be queued behind A's node before A goes.
	for i := 0; i < holds; i += holds / sampled {
		path := fmt.Sprintf("%s/%d", root, i)
		for {
			kids, _, err := b.Conn().Children(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(kids) == 2 {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: %d nodes, want A's and B's", path, len(kids))
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	closed := make(chan struct{})
	go func() { a.Close(); close(closed) }() // the waiters may hold before Close returns
	defer func() { <-closed }()
	for i, w := range ws {
		r := locktest.AwaitLock(t, w.locked, 30*time.Second, fmt.Sprintf("waiter %d", i))
		if r.Err != nil {
			t.Fatalf("waiter %d: %v", i, r.Err)
		}
		if !locktest.IsClosed(w.held) {
			t.Errorf("waiter %d holds while the Done of A's hold on that path is still open", i)
		}
	}
}

// A Connect that gives up writes nothing to the program's log by default
// (go-zookeeper's lines go to WithZKLogger's logger only), passes no line
// on after it returned, and leaves no goroutine of its connection.
func TestConnectThatGivesUpLeavesNothing(t *testing.T) {
	zktest.VerifyNoLeaksWithin(t, 3*time.Second) // go-zookeeper gives a sessionless close a second
	var std bytes.Buffer
	var mu sync.Mutex
	log.SetOutput(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return std.Write(p) }))
	defer log.SetOutput(os.Stderr)

	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	if _, err := zklocks.Connect(ctx, []string{"127.0.0.1:1"}, 4*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect to a closed port = %v; want context.DeadlineExceeded", err)
	}
	l := &lines{}
	ctx, cancel = context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	if _, err := zklocks.Connect(ctx, []string{"127.0.0.1:1"}, 4*time.Second, zklocks.WithZKLogger(l)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect to a closed port = %v; want context.DeadlineExceeded", err)
	}
	after := l.count()
	if after == 0 {
		t.Error("WithZKLogger's logger got none of the failed dials' lines")
	}
	time.Sleep(2500 * time.Millisecond) // two more of go-zookeeper's dial rounds, were it still dialling
	if n := l.count(); n != after {
		t.Errorf("%d lines reached the logger after Connect returned", n-after)
	}
	mu.Lock()
	defer mu.Unlock()
	if std.Len() > 0 {
		t.Errorf("Connect wrote to the standard logger without being asked: %q", std.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
