package sequential_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
)

// tripwire wraps a dialer so that a test can lose the answer to one
// create: once armed, the connection that sends the next create of a lock
// node ("-lock-" in its path) delivers nothing more to the client; the
// request itself reaches the server. The test then cuts the connection
// with a Cutter: the client sees zk.ErrConnectionClosed for a create that
// was applied, the case the GUID in the node's name is there for.
type tripwire struct {
	dial  zk.Dialer
	armed atomic.Bool
	sent  chan struct{} // closed once the create has been written
	once  sync.Once
}

func newTripwire(dial zk.Dialer) *tripwire {
	return &tripwire{dial: dial, sent: make(chan struct{})}
}

func (tw *tripwire) Dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := tw.dial(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &tripConn{Conn: c, tw: tw}, nil
}

type tripConn struct {
	net.Conn
	tw      *tripwire
	tripped atomic.Bool
}

func (c *tripConn) Write(b []byte) (int, error) {
	trip := isLockCreate(b) && c.tw.armed.CompareAndSwap(true, false)
	if trip {
		c.tripped.Store(true) // before the write: no answer can come earlier
	}
	n, err := c.Conn.Write(b)
	if trip {
		c.tw.once.Do(func() { close(c.tw.sent) })
	}
	return n, err
}

func (c *tripConn) Read(b []byte) (int, error) {
	for {
		n, err := c.Conn.Read(b)
		if err != nil || !c.tripped.Load() {
			return n, err
		}
		// Tripped: the create's answer, and everything after it, is lost.
	}
}

// isLockCreate reports whether b is a go-zookeeper create request (one
// Write per request: length, xid, opcode 1, then the path) for a lock node.
func isLockCreate(b []byte) bool {
	if len(b) < 16 || binary.BigEndian.Uint32(b[8:12]) != 1 {
		return false
	}
	n := int(binary.BigEndian.Uint32(b[12:16]))
	return n > 0 && 16+n <= len(b) && bytes.Contains(b[16:16+n], []byte("-lock-"))
}

// ownNodes lists the children of path whose ephemeralOwner is sid.
func ownNodes(t *testing.T, conn *zk.Conn, path string, sid int64) []string {
	t.Helper()
	var out []string
	for _, k := range zktest.Children(t, conn, path) {
		ok, st, err := conn.Exists(path + "/" + k)
		require.NoError(t, err)
		if ok && st.EphemeralOwner == sid {
			out = append(out, path+"/"+k)
		}
	}
	return out
}

// faultClient is a session whose create answer can be lost and whose
// connection can be cut.
type faultClient struct {
	conn *zk.Conn
	cut  *zktest.Cutter
	tw   *tripwire
	m    *sequential.Mutex
}

func newFaultClient(t *testing.T, path string, timeout time.Duration) faultClient {
	t.Helper()
	cut := zktest.NewCutter()
	tw := newTripwire(cut.Dialer())
	conn := zktest.Connect(t, zktest.WithDialer(tw.Dial), zktest.WithSessionTimeout(timeout))
	m, err := sequential.New(zktest.Session(t, conn), path)
	require.NoError(t, err)
	return faultClient{conn: conn, cut: cut, tw: tw, m: m}
}

// loseCreateAnswer arms the tripwire, waits until c's Lock has sent its
// create and the server has applied it, and cuts c's connection before
// the answer arrives. It returns the node the server made.
func (c faultClient) loseCreateAnswer(t *testing.T, admin *zk.Conn, path string, lock func()) string {
	t.Helper()
	sid := c.conn.SessionID()
	require.NoError(t, createPath(admin, path)) // so that the first create is the one applied
	c.tw.armed.Store(true)
	lock()
	select {
	case <-c.tw.sent:
	case <-time.After(5 * time.Second):
		t.Fatal("no create sent")
	}
	var made []string
	waitFor(t, 5*time.Second, "the lost create applied", func() bool {
		made = ownNodes(t, admin, path, sid)
		return len(made) == 1
	})
	c.cut.Cut()
	return made[0]
}

// TestConnectionLostDuringCreate: the create is applied but its answer is
// lost with the connection. After reconnecting, the Mutex finds its node
// by GUID instead of creating a second one.
func TestConnectionLostDuringCreate(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	c := newFaultClient(t, path, sessionTimeout)
	sid := c.conn.SessionID()

	var res <-chan error
	made := c.loseCreateAnswer(t, admin, path, func() { res = lockAsync(ctx, c.m) })
	time.Sleep(100 * time.Millisecond) // cut for a while, well within the session timeout
	c.cut.Heal()
	requireAcquired(t, res, "Lock after the create's answer was lost")

	require.Equal(t, sid, c.conn.SessionID(), "the session survived")
	assert.Equal(t, made, c.m.Node(), "the node of the lost create is ours")
	assert.Equal(t, []string{made}, ownNodes(t, fresh(t, admin), path, sid), "exactly one node for this client")
	st := c.m.Stats()
	t.Logf("requests %d, notifications %d", st.Requests, st.Notifications)
	require.NoError(t, c.m.Unlock(ctx))
	assert.Empty(t, ownNodes(t, fresh(t, admin), path, sid))
}

// TestCancelWhileCreateAnswerLost: the create is applied, its answer lost,
// and Lock's ctx is cancelled while the client is still cut off, so the
// Mutex never learned its node's name. Lock returns soon after the cancel
// (it tries to clean up for at most a second), and the node, found by
// GUID, is deleted once the client is back: by Lock itself if the
// connection returns within that second, else by its clean-up in the
// background, never left to the session's expiry.
func TestCancelWhileCreateAnswerLost(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	h := newContender(t, path)
	require.NoError(t, h.m.Lock(ctx)) // so that our Lock would have to wait
	c := newFaultClient(t, path, sessionTimeout)
	sid := c.conn.SessionID()

	lctx, cancel := context.WithCancel(ctx)
	var res <-chan error
	made := c.loseCreateAnswer(t, admin, path, func() { res = lockAsync(lctx, c.m) })
	cancel()
	time.AfterFunc(300*time.Millisecond, c.cut.Heal)

	select {
	case err := <-res:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(sessionTimeout + 2*time.Second):
		t.Fatal("Lock did not return after its ctx was cancelled")
	}
	assert.Empty(t, c.m.Node())
	t.Logf("node left when Lock returned: %v", ownNodes(t, fresh(t, admin), path, sid))
	waitFor(t, 10*time.Second, "the lost create's node deleted", func() bool {
		ok, _, err := fresh(t, admin).Exists(made)
		return err == nil && !ok
	})
	require.NoError(t, h.m.Unlock(ctx))
}

// TestCutOffWhileJoining: the connection is cut while the create is in
// flight and stays cut past Lock's deadline. Lock returns about at its
// deadline, not after a session timeout of trying to reach the ensemble
// to find its node by GUID; that search goes on in the background and
// deletes the node once the connection is back, while the session lives.
func TestCutOffWhileJoining(t *testing.T) {
	zktest.Servers(t)
	zktest.VerifyNoLeaks(t) // the background clean-up ends too
	const (
		session = 6 * time.Second
		bound   = time.Second
	)
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	h := newContender(t, path)
	require.NoError(t, h.m.Lock(ctx)) // so that our Lock would have to wait
	c := newFaultClient(t, path, session)
	sid := c.conn.SessionID()

	lctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	start := time.Now()
	var res <-chan error
	made := c.loseCreateAnswer(t, admin, path, func() { res = lockAsync(lctx, c.m) })
	select {
	case err := <-res:
		took := time.Since(start)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		t.Logf("Lock returned %v after it started (deadline %v, session timeout %v)", took.Round(time.Millisecond), bound, session)
		assert.Less(t, took, bound+2*time.Second, "Lock overran its deadline while cut off")
	case <-time.After(bound + session + 5*time.Second):
		t.Fatal("Lock did not return while cut off")
	}
	assert.Empty(t, c.m.Node())
	assert.Equal(t, []string{made}, ownNodes(t, fresh(t, admin), path, sid), "no one can delete the node while the client is cut off")

	c.cut.Heal()
	healed := time.Now()
	waitFor(t, 10*time.Second, "the node deleted after the heal", func() bool {
		ok, _, err := fresh(t, admin).Exists(made)
		return err == nil && !ok
	})
	t.Logf("node deleted %v after the heal", time.Since(healed).Round(time.Millisecond))
	waitFor(t, 10*time.Second, "the client reconnected", func() bool { return c.conn.State() == zk.StateHasSession })
	assert.Equal(t, sid, c.conn.SessionID(), "deleted by the background clean-up, not with the session")
	require.NoError(t, h.m.Unlock(ctx))
}

// TestSessionExpiredDuringCreate: the create is applied, its answer lost,
// and the client stays cut off until its session expires, which takes the
// node with it. The Mutex then queues again on the new session.
func TestSessionExpiredDuringCreate(t *testing.T) {
	const timeout = time.Second
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	c := newFaultClient(t, path, timeout)
	oldSID := c.conn.SessionID()

	var res <-chan error
	made := c.loseCreateAnswer(t, admin, path, func() { res = lockAsync(ctx, c.m) })
	waitFor(t, 2*timeout+10*time.Second, "the session expired and its node with it", func() bool {
		ok, _, err := admin.Exists(made)
		return err == nil && !ok
	})
	c.cut.Heal()
	requireAcquired(t, res, "Lock after the session expired during the create")

	newSID := c.conn.SessionID()
	require.NotEqual(t, oldSID, newSID)
	assert.Equal(t, []string{c.m.Node()}, ownNodes(t, fresh(t, admin), path, newSID), "one node, on the new session")
	assert.NotEqual(t, made, c.m.Node())
	require.NoError(t, c.m.Unlock(ctx))
}

// TestFoundNodeOfAnotherSession (CURATOR-604): after a lost create answer,
// the search by GUID can list a node that carries our GUID but belongs to
// another session (in real life: our own earlier session, expired, whose
// node this server has not removed yet). It must never be taken as ours:
// the hold would be on a node that is about to vanish. Here such a node
// is planted from another session, ahead of ours in the queue: when our
// create is on its way out (zktest.Wire), the GUID is read from its path,
// the twin made, and then our create goes; its answer is lost.
func TestFoundNodeOfAnotherSession(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	stale := zktest.Connect(t)
	require.NoError(t, createPath(admin, path))

	w := zktest.NewWire(t)
	conn := zktest.Connect(t, zktest.WithDialer(w.Dialer()), zktest.WithSessionTimeout(sessionTimeout))
	m, err := sequential.New(zktest.Session(t, conn), path)
	require.NoError(t, err)
	sid := conn.SessionID()

	var (
		mu        sync.Mutex
		ours      zktest.Request // our first create, once seen
		staleNode string
		plantErr  error
	)
	isCreate := func(r zktest.Request) bool {
		return (r.Op == zktest.OpCreate || r.Op == zktest.OpCreate2) && strings.HasPrefix(r.Path, path+"/_c_")
	}
	w.OnRequest(func(r zktest.Request) zktest.Verdict {
		mu.Lock()
		defer mu.Unlock()
		if isCreate(r) && ours.Op == 0 {
			ours = r
			staleNode, plantErr = stale.Create(r.Path, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		}
		return zktest.Pass
	})
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		mu.Lock()
		defer mu.Unlock()
		if r.Request.Conn == ours.Conn && r.Request.Xid == ours.Xid && ours.Op != 0 {
			return zktest.Break // the answer to our create is lost
		}
		return zktest.Pass
	})
	require.NoError(t, m.Lock(ctx))
	mu.Lock()
	require.NoError(t, plantErr, "planting the twin")
	require.NotEmpty(t, staleNode, "our create was never seen on the wire")
	mu.Unlock()

	made := ownNodes(t, admin, path, sid)
	require.Len(t, made, 1, "one node of our session")
	assert.Equal(t, made[0], m.Node(), "our node is the one our session made")
	assert.Less(t, staleNode, m.Node(), "the twin is ahead of ours in the queue")
	_, st, err := fresh(t, admin).Get(m.Node())
	require.NoError(t, err)
	assert.Equal(t, sid, st.EphemeralOwner)
	assert.Equal(t, st.Czxid, m.Token())
	ok, _, err := fresh(t, admin).Exists(staleNode)
	require.NoError(t, err)
	assert.False(t, ok, "the other session's twin was removed from the queue")
	require.NoError(t, m.Unlock(ctx))
}

// TestUnlockWhileCutOff (CURATOR-678): an Unlock whose delete can not
// reach the ensemble does not forget the node: the delete is retried in
// the background, and the next waiter gets the lock once it goes through.
// Whether Unlock's ctx ends first (Short) or the client gives up on the
// servers first (Long: go-zookeeper fails queued requests with
// ErrNoServer after a round of failed dials), Unlock returns nil. The
// node's data may have been rewritten since the create (DataChanged: the
// reentrant and timeout packages do that); the background delete must
// still remove it, whatever its version.
func TestUnlockWhileCutOff(t *testing.T) {
	for _, tc := range []struct {
		name     string
		unlockIn time.Duration // Unlock's ctx
		cutFor   time.Duration
		rewrite  bool // rewrite the node's data before the cut
	}{
		{"Short", 200 * time.Millisecond, 300 * time.Millisecond, false},
		{"Long", 10 * time.Second, 1500 * time.Millisecond, false},
		{"ShortDataChanged", 200 * time.Millisecond, 300 * time.Millisecond, true},
		{"LongDataChanged", 10 * time.Second, 1500 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t, 30*time.Second)
			path := zktest.LockPath(t)
			admin := zktest.Connect(t)
			// Twice the usual session timeout: go-zookeeper sleeps a second
			// after each round of refused dials, so a client cut for 1.5s is
			// back about 2s after the cut, which a 2s session may not survive.
			h := newFaultClient(t, path, 2*sessionTimeout)
			w := newContender(t, path)
			require.NoError(t, h.m.Lock(ctx))
			node, sid := h.m.Node(), h.conn.SessionID()
			if tc.rewrite {
				_, err := h.conn.Set(node, []byte("rewritten"), -1)
				require.NoError(t, err)
			}
			res := lockAsync(ctx, w.m)
			waitQueued(t, w.m, w.conn)

			h.cut.Cut()
			time.AfterFunc(tc.cutFor, h.cut.Heal)
			uctx, cancel := context.WithTimeout(ctx, tc.unlockIn)
			err := h.m.Unlock(uctx)
			cancel()
			require.NoError(t, err, "Unlock hands the delete to the background")
			select {
			case <-h.m.Done():
			default:
				t.Fatal("Done still open after Unlock")
			}
			requireAcquired(t, res, "waiter after the background delete")
			require.Equal(t, sid, h.conn.SessionID(), "the old holder's session survived: only the delete freed the lock")
			ok, _, err := fresh(t, admin).Exists(node)
			require.NoError(t, err)
			assert.False(t, ok)
			require.NoError(t, w.m.Unlock(ctx))
			require.True(t, errors.Is(h.m.Unlock(ctx), zklocks.ErrNotLocked))
		})
	}
}
