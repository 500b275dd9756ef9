package zktest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/liveness"
)

// DefaultSessionTimeout is the session timeout Connect asks for unless
// WithSessionTimeout says otherwise. The local ensemble grants anything
// from 400ms to 60s.
const DefaultSessionTimeout = 2 * time.Second

// sessionWait is how long Connect waits for a session.
const sessionWait = 10 * time.Second

// ConnOption changes how Connect opens a session.
type ConnOption func(*connConfig)

type connConfig struct {
	timeout  time.Duration
	events   chan<- zk.Event
	callback func(zk.Event)
	dialer   zk.Dialer
	servers  []string
}

// WithSessionTimeout sets the session timeout the client asks for.
func WithSessionTimeout(d time.Duration) ConnOption {
	return func(c *connConfig) { c.timeout = d }
}

// WithEvents forwards every session event of the connection to ch, without
// blocking: an event that finds ch full is dropped, so give ch room. ch must
// stay open until the test's cleanup has run.
func WithEvents(ch chan<- zk.Event) ConnOption {
	return func(c *connConfig) { c.events = ch }
}

// WithEventCallback has go-zookeeper call f with every event, in its own
// event loop: a callback that blocks holds the connection in the state it
// just entered (see Gate).
func WithEventCallback(f func(zk.Event)) ConnOption {
	return func(c *connConfig) { c.callback = f }
}

// WithServers connects to servers instead of Servers(t), e.g. to the
// ensemble of PrivateEnsemble.
func WithServers(servers []string) ConnOption {
	return func(c *connConfig) { c.servers = servers }
}

// WithDialer makes the connection dial through d, e.g. a Cutter's Dialer.
func WithDialer(d zk.Dialer) ConnOption {
	return func(c *connConfig) { c.dialer = d }
}

// connInfo is what zktest remembers about a connection it opened.
type connInfo struct {
	cutter  *Cutter
	timeout time.Duration // asked for
	session *zklocks.Session
}

var conns sync.Map // *zk.Conn -> *connInfo

// Connect opens a new session, one simulated client, to Servers(t) and
// blocks until it is established, failing the test after 10s. It reads the
// connection's event channel for as long as the connection lives
// (go-zookeeper drops events nobody reads), keeps the client library
// quiet, and closes the connection in t.Cleanup, waiting until the client's
// goroutines are done.
func Connect(t testing.TB, opts ...ConnOption) *zk.Conn {
	t.Helper()
	cfg := connConfig{timeout: DefaultSessionTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.servers == nil {
		cfg.servers = Servers(t)
	}
	conn, closeConn := open(t, cfg.servers, cfg)
	t.Cleanup(closeConn)
	if err := waitSession(conn, 0, sessionWait); err != nil {
		t.Fatalf("zktest: %v (servers %v)", err, cfg.servers)
	}
	return conn
}

// open opens a connection with zklocks.Connect. The returned func closes
// it and waits for its goroutines.
func open(t testing.TB, servers []string, cfg connConfig) (*zk.Conn, func()) {
	t.Helper()
	cutter := newCutter(cfg.dialer)
	callback := func(ev zk.Event) {
		if cfg.callback != nil {
			cfg.callback(ev)
		}
		if cfg.events != nil {
			select {
			case cfg.events <- ev:
			default:
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), sessionWait)
	defer cancel()
	s, err := zklocks.Connect(ctx, servers, cfg.timeout, zklocks.WithZKLogger(quiet{}),
		zklocks.WithZKOptions(zk.WithDialer(cutter.Dialer()), zk.WithEventCallback(callback)))
	if err != nil {
		t.Fatalf("zktest: connect to %v: %v", servers, err)
	}
	conn := s.Conn()
	conns.Store(conn, &connInfo{cutter: cutter, timeout: cfg.timeout, session: s})
	return conn, func() {
		closed := make(chan struct{})
		go func() { s.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Errorf("zktest: the connection's goroutines had not ended 10s after Close")
		}
		conns.Delete(conn)
	}
}

// Session returns the zklocks.Session of a connection Connect opened,
// which knows the session timeout the servers granted it.
func Session(t testing.TB, conn *zk.Conn) *zklocks.Session {
	t.Helper()
	info, ok := conns.Load(conn)
	if !ok {
		t.Fatalf("zktest: Session of a connection zktest did not open (or already closed)")
	}
	return info.(*connInfo).session
}

// Connected is Connect's Session: a new session, one simulated client.
func Connected(t testing.TB, opts ...ConnOption) *zklocks.Session {
	t.Helper()
	return Session(t, Connect(t, opts...))
}

// waitSession polls until conn has a session other than notSID.
func waitSession(conn *zk.Conn, notSID int64, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		if conn.State() == zk.StateHasSession && conn.SessionID() != notSID && conn.SessionID() != 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return &noSessionError{within: within, state: conn.State()}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type noSessionError struct {
	within time.Duration
	state  zk.State
}

func (e *noSessionError) Error() string {
	return "no ZooKeeper session after " + e.within.String() + " (state " + e.state.String() + ")"
}

// quiet is a zk.Logger that drops everything.
type quiet struct{}

func (quiet) Printf(string, ...any) {}

// WaitNoSession waits until go-zookeeper no longer reports a session on
// conn, failing the test after 10s. For a moment after a Close, or after
// a Cutter's cut, it still reports the old one.
func WaitNoSession(t testing.TB, conn *zk.Conn) {
	t.Helper()
	deadline := time.Now().Add(sessionWait)
	for conn.State() == zk.StateHasSession {
		if time.Now().After(deadline) {
			t.Fatalf("zktest: go-zookeeper still reports a session %v later", sessionWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Clock returns the liveness clock of a connection Connect opened: its
// Session's, which every lock made on that Session shares.
func Clock(t testing.TB, conn *zk.Conn) *liveness.Clock {
	t.Helper()
	return liveness.SessionClock(Session(t, conn))
}
