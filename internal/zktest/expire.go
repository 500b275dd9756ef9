package zktest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// ExpireSession makes the servers expire conn's session and blocks until
// the client has a new one. conn must come from Connect and have a session.
//
// go-zookeeper v1.0.4 can not open a second connection with the same
// session id and password (the usual way to force an expiry), so the
// session is starved instead: ExpireSession creates an ephemeral probe
// node with conn, cuts conn's connections with its Cutter, and watches the
// probe from a second session. ZooKeeper deletes a session's ephemeral
// nodes in the same transaction that expires it, so the probe's deletion
// is the servers' own word that the session is gone (one session timeout,
// rounded up to a tick, after the cut). Then it heals the Cutter; the
// client reconnects, is told zk.StateExpired, and starts a new session.
func ExpireSession(t testing.TB, conn *zk.Conn) {
	t.Helper()
	v, ok := conns.Load(conn)
	if !ok {
		t.Fatal("zktest: ExpireSession needs a connection opened by zktest.Connect")
	}
	info := v.(*connInfo)
	sid := conn.SessionID()
	if conn.State() != zk.StateHasSession || sid == 0 {
		t.Fatalf("zktest: ExpireSession: connection has no session (state %v)", conn.State())
	}
	probe := NewSessionProbe(t, conn)

	watcher, closeWatcher := open(t, Servers(t), connConfig{timeout: DefaultSessionTimeout})
	defer closeWatcher()
	if err := waitSession(watcher, 0, sessionWait); err != nil {
		t.Fatalf("zktest: ExpireSession: watcher: %v", err)
	}

	info.cutter.Cut()
	defer info.cutter.Heal()
	// The server's session timeout is at most the one asked for, rounded
	// up to whole ticks; allow it twice plus slack for a loaded machine.
	probe.WaitExpired(t, watcher, 2*info.timeout+10*time.Second)
	info.cutter.Heal()
	if err := waitSession(conn, sid, sessionWait); err != nil {
		t.Fatalf("zktest: ExpireSession: after the expiry of 0x%x: %v", sid, err)
	}
}

// SessionProbe tells another session when a session has expired: it is an
// ephemeral node of that session, and ZooKeeper deletes a session's
// ephemeral nodes in the very transaction that expires it.
type SessionProbe struct{ path string }

// NewSessionProbe creates a probe for conn's current session.
//
// A create that meets a lost connection is tried again: go-zookeeper
// drops the connection, and fails every request in flight with
// zk.ErrConnectionClosed, when a reply takes more than two thirds of the
// session timeout (v1.0.4's conn.go: recvTimeout, the read deadline of
// recvLoop), which a fresh member on a loaded machine can take at
// the short timeouts of the fault tests. The session itself lives on,
// and the probe is only made for it: the retry stops if the session
// changed.
func NewSessionProbe(t testing.TB, conn *zk.Conn) *SessionProbe {
	t.Helper()
	sid := conn.SessionID()
	path := fmt.Sprintf("%s/session-probe-%016x-%s", Root, sid, randomHex(4))
	for _, p := range []struct {
		path  string
		flags int32
	}{{Root, 0}, {path, zk.FlagEphemeral}} {
		if err := createForSession(conn, sid, p.path, p.flags); err != nil {
			t.Fatalf("zktest: session probe: create %s: %v", p.path, err)
		}
	}
	return &SessionProbe{path: path}
}

// createForSession creates path with conn, counting an existing node as
// created (Root is shared; the probe's name is unique, so finding it
// after a lost reply means our create went through).
func createForSession(conn *zk.Conn, sid int64, path string, flags int32) error {
	deadline := time.Now().Add(sessionWait)
	for {
		_, err := conn.Create(path, nil, flags, zk.WorldACL(zk.PermAll))
		switch {
		case (err == nil || errors.Is(err, zk.ErrNodeExists)) && conn.SessionID() != sid:
			// Made, but perhaps by the next session: not a probe of ours.
			return fmt.Errorf("the session 0x%x ended while the probe was made", sid)
		case err == nil || errors.Is(err, zk.ErrNodeExists):
			return nil
		case !errors.Is(err, zk.ErrConnectionClosed):
			return err
		case conn.SessionID() != sid:
			return fmt.Errorf("%w (and the session 0x%x is gone)", err, sid)
		case time.Now().After(deadline):
			return fmt.Errorf("%w (still, after %v)", err, sessionWait)
		}
		time.Sleep(50 * time.Millisecond) // let the client reconnect
	}
}

// WaitExpired blocks until the probe's session has expired, as watcher (a
// connection of another session) sees it, and fails the test after within.
func (p *SessionProbe) WaitExpired(t testing.TB, watcher *zk.Conn, within time.Duration) {
	t.Helper()
	if err := waitGone(watcher, p.path, within); err != nil {
		t.Fatalf("zktest: session of probe %s did not expire: %v", p.path, err)
	}
}

// waitGone blocks until path does not exist, using exists watches.
func waitGone(conn *zk.Conn, path string, within time.Duration) error {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		exists, _, ch, err := conn.ExistsW(path)
		if err != nil {
			return fmt.Errorf("exists %s: %w", path, err)
		}
		if !exists {
			return nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return fmt.Errorf("%s still exists after %v", path, within)
		}
	}
}
