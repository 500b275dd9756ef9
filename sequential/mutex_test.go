package sequential_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
)

const sessionTimeout = zktest.DefaultSessionTimeout

func TestConformance(t *testing.T) {
	locktest.Run(t, locktest.Variant{
		Name: "sequential",
		New: func(s *zklocks.Session, path string, opts ...zklocks.Option) (zklocks.Locker, error) {
			m, err := sequential.New(s, path, opts...)
			if err != nil {
				return nil, err
			}
			return m, nil
		},
		FIFO:   true,
		Layout: locktest.ChildrenOfPath,
	})
}

// contender is one simulated process: its own session and a Mutex on it.
type contender struct {
	conn *zk.Conn
	m    *sequential.Mutex
}

func newContender(t *testing.T, path string, opts ...zklocks.Option) contender {
	t.Helper()
	conn := zktest.Connect(t)
	m, err := sequential.New(zktest.Session(t, conn), path, opts...)
	require.NoError(t, err)
	return contender{conn: conn, m: m}
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// lockAsync runs m.Lock in a goroutine.
func lockAsync(ctx context.Context, m *sequential.Mutex) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- m.Lock(ctx) }()
	return ch
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not after %v: %s", d, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// queueLen counts the contenders on path (children with a sequence suffix).
func queueLen(t *testing.T, conn *zk.Conn, path string) int {
	t.Helper()
	q, err := sequential.Contenders(t.Context(), zktest.Session(t, conn), path)
	require.NoError(t, err)
	return len(q)
}

// fresh makes conn's server catch up with the leader (sync) before a test
// reads what another session wrote: ZooKeeper promises a session only its
// own writes in order, and the server a session reads from may lag.
func fresh(t *testing.T, conn *zk.Conn) *zk.Conn {
	t.Helper()
	_, err := conn.Sync("/")
	require.NoError(t, err)
	return conn
}

// waitQueued waits until m has created its node and set its watch on its
// predecessor: its requests stop growing at create, watch own node, list,
// watch predecessor.
func waitQueued(t *testing.T, m *sequential.Mutex, conn *zk.Conn) {
	t.Helper()
	waitFor(t, 5*time.Second, "contender queued", func() bool { return m.Node() != "" })
	waitFor(t, 5*time.Second, "contender watching its predecessor", func() bool {
		return m.Stats().Requests >= 4
	})
}

func requireBlocked(t *testing.T, res <-chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-res:
		t.Fatalf("%s: Lock returned (%v) while it must wait", what, err)
	case <-time.After(d):
	}
}

func requireAcquired(t *testing.T, res <-chan error, what string) {
	t.Helper()
	select {
	case err := <-res:
		require.NoError(t, err, what)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: Lock still blocked after 10s", what)
	}
}

// TestFIFO: waiters that queue in any order acquire in the order of their
// nodes' sequence numbers, which is the order ZooKeeper created them in.
func TestFIFO(t *testing.T) {
	const n = 8
	ctx := testContext(t, 60*time.Second)
	path := zktest.LockPath(t)
	h := newContender(t, path)
	require.NoError(t, h.m.Lock(ctx))

	var (
		mu    sync.Mutex
		order []string // nodes, in the order they acquired
		wg    sync.WaitGroup
	)
	ws := make([]contender, n)
	for i := range ws {
		ws[i] = newContender(t, path)
	}
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.m.Lock(ctx); err != nil {
				t.Errorf("Lock: %v", err)
				return
			}
			mu.Lock()
			order = append(order, w.m.Node())
			mu.Unlock()
			if err := w.m.Unlock(ctx); err != nil {
				t.Errorf("Unlock: %v", err)
			}
		}()
	}
	waitFor(t, 10*time.Second, "all waiters queued", func() bool { return queueLen(t, h.conn, path) == n+1 })
	q, err := sequential.Contenders(ctx, zktest.Session(t, h.conn), path)
	require.NoError(t, err)
	var created []string
	for _, c := range q[1:] {
		created = append(created, c.Node)
	}
	require.NoError(t, h.m.Unlock(ctx))
	wg.Wait()
	assert.Equal(t, created, order, "acquisition order must be the nodes' creation order")
}

// TestForeignChildren: children that are not contenders (no sequence
// suffix) are ignored, and kazoo's and Curator's lock nodes on the same
// path are contenders like ours: our lock waits for them.
func TestForeignChildren(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	require.NoError(t, createPath(admin, path))

	// Not contenders: no sequence suffix, or one too short.
	for _, name := range []string{"config", "readme-lock-", "x-lock-12345", "0123456789x"} {
		_, err := admin.Create(path+"/"+name, []byte("not a lock"), 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	c := newContender(t, path)
	require.NoError(t, c.m.TryLock(ctx), "TryLock with only non-contender children")
	require.NoError(t, c.m.Unlock(ctx))

	// A kazoo contender and a Curator contender, each on its own session,
	// created the way those libraries do: ZooKeeper appends the sequence.
	kazoo := zktest.Connect(t)
	kazooNode, err := kazoo.Create(path+"/0123456789abcdef0123456789abcdef__lock__", []byte("kazoo"),
		zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	curator := zktest.Connect(t)
	curatorNode, err := curator.Create(path+"/_c_1b4e28ba-2fa1-11d2-883f-0016d3cca427-lock-", []byte("curator"),
		zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	err = c.m.TryLock(ctx)
	require.ErrorIs(t, err, zklocks.ErrLocked, "TryLock behind a kazoo holder")

	res := lockAsync(ctx, c.m)
	waitQueued(t, c.m, c.conn)
	q, err := sequential.Contenders(ctx, zktest.Session(t, fresh(t, admin)), path)
	require.NoError(t, err)
	require.Len(t, q, 3, "non-contender children must not be listed")
	assert.Equal(t, []string{kazooNode, curatorNode, c.m.Node()}, []string{q[0].Node, q[1].Node, q[2].Node})
	assert.Equal(t, "kazoo", string(q[0].Data))

	requireBlocked(t, res, 200*time.Millisecond, "behind kazoo and Curator")
	require.NoError(t, kazoo.Delete(kazooNode, -1))
	requireBlocked(t, res, 200*time.Millisecond, "behind Curator")
	require.NoError(t, curator.Delete(curatorNode, -1))
	requireAcquired(t, res, "after the foreign contenders left")
	require.NoError(t, c.m.Unlock(ctx))
}

// createPath creates path and its parents as persistent nodes.
func createPath(conn *zk.Conn, path string) error {
	for i := 1; i <= len(path); i++ {
		if i == len(path) || path[i] == '/' {
			_, err := conn.Create(path[:i], nil, 0, zk.WorldACL(zk.PermAll))
			if err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
		}
	}
	return nil
}

// TestPredecessorGivesUp: a waiter whose predecessor leaves the queue
// without having held the lock must not take it: it lists again and waits
// for the holder.
func TestPredecessorGivesUp(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	h := newContender(t, path)
	w1 := newContender(t, path)
	w2 := newContender(t, path)
	require.NoError(t, h.m.Lock(ctx))

	ctx1, cancel1 := context.WithCancel(ctx)
	res1 := lockAsync(ctx1, w1.m)
	waitQueued(t, w1.m, w1.conn)
	res2 := lockAsync(ctx, w2.m)
	waitQueued(t, w2.m, w2.conn)

	before := w2.m.Stats()
	cancel1() // w1, w2's predecessor, gives up
	require.ErrorIs(t, <-res1, context.Canceled)
	requireBlocked(t, res2, 300*time.Millisecond, "w2 after its predecessor (not the holder) left")
	after := w2.m.Stats()
	assert.Equal(t, before.Notifications+1, after.Notifications, "w2 woken once by its predecessor's delete")
	assert.Equal(t, before.Requests+2, after.Requests, "w2 lists again and watches the holder")

	require.NoError(t, h.m.Unlock(ctx))
	requireAcquired(t, res2, "w2 after the holder released")
	require.NoError(t, w2.m.Unlock(ctx))
}

// TestReadFreeHandoff: the waiter second in line takes the lock on its
// predecessor's delete notification without another request.
func TestReadFreeHandoff(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	h := newContender(t, path)
	w := newContender(t, path)
	require.NoError(t, h.m.Lock(ctx))
	res := lockAsync(ctx, w.m)
	waitQueued(t, w.m, w.conn)
	requireBlocked(t, res, 50*time.Millisecond, "w behind h")
	before := w.m.Stats()
	assert.Equal(t, zklocks.Stats{Requests: 4}, before, "create, watch own node, list, watch predecessor")

	require.NoError(t, h.m.Unlock(ctx))
	requireAcquired(t, res, "w after h released")
	after := w.m.Stats()
	assert.Equal(t, before.Requests, after.Requests, "no request between the notification and the hold")
	assert.Equal(t, before.Notifications+1, after.Notifications)
	assert.Greater(t, w.m.Token(), int64(0))
	require.NoError(t, w.m.Unlock(ctx))
	assert.Equal(t, after.Requests+1, w.m.Stats().Requests, "Unlock is one delete")
}

// TestNodeDeletedWhileWaiting: when an operator deletes a waiter's node,
// its Lock fails with ErrLockLost instead of ever succeeding on a node
// that is gone.
func TestNodeDeletedWhileWaiting(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	h := newContender(t, path)
	w := newContender(t, path)
	require.NoError(t, h.m.Lock(ctx))
	res := lockAsync(ctx, w.m)
	waitQueued(t, w.m, w.conn)
	require.NoError(t, admin.Delete(w.m.Node(), -1))

	select {
	case err := <-res:
		require.ErrorIs(t, err, zklocks.ErrLockLost)
		require.ErrorIs(t, err, hold.ErrNodeDeleted)
		t.Logf("Lock: %v", err)
	case <-time.After(sessionTimeout + time.Second):
		t.Fatal("Lock still waiting after its node was deleted")
	}
	assert.Empty(t, w.m.Node())
	assert.Equal(t, 1, queueLen(t, fresh(t, admin), path), "only the holder's node is left")
	select {
	case <-h.m.Done():
		t.Fatal("the holder's Done closed")
	default:
	}
	require.NoError(t, h.m.Unlock(ctx))
}

// TestLossAndUnlock: after the holder's node is deleted, Done closes, Err
// and Unlock report ErrLockLost with the reason, and the Mutex can lock
// again.
func TestLossAndUnlock(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	h := newContender(t, path)
	require.NoError(t, h.m.Lock(ctx))
	require.NoError(t, h.m.Err())
	require.NoError(t, admin.Delete(h.m.Node(), -1))
	locktest.RequireClosedWithin(t, h.m.Done(), sessionTimeout+time.Second, "after the node was deleted")
	require.ErrorIs(t, h.m.Err(), zklocks.ErrLockLost)
	require.ErrorIs(t, h.m.Err(), hold.ErrNodeDeleted)
	require.ErrorIs(t, h.m.Lock(ctx), zklocks.ErrAlreadyLocked, "Unlock must come first")
	err := h.m.Unlock(ctx)
	require.ErrorIs(t, err, zklocks.ErrLockLost)
	require.ErrorIs(t, err, hold.ErrNodeDeleted)
	require.ErrorIs(t, h.m.Err(), zklocks.ErrLockLost, "Err keeps the reason after Unlock")
	require.ErrorIs(t, h.m.Unlock(ctx), zklocks.ErrNotLocked)

	require.NoError(t, h.m.Lock(ctx))
	require.NoError(t, h.m.Err())
	require.NoError(t, h.m.Unlock(ctx))
	require.NoError(t, h.m.Err())
}

// TestUnlockAfterDataChange: the reentrant and timeout packages rewrite
// their own node's data; Unlock still deletes it, with one request (a
// delete at the version seen at create would fail with BadVersion, a
// logged error transaction, and need a read and a second delete).
func TestUnlockAfterDataChange(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	h := newContender(t, path, sequential.WithData([]byte("v0")))
	require.NoError(t, h.m.Lock(ctx))
	before := h.m.Stats()
	_, err := h.conn.Set(h.m.Node(), []byte("v1"), 0)
	require.NoError(t, err)
	// The change fires the hold monitor's watch on our node; it sets the
	// watch again with one read. After that the Mutex sends nothing until
	// Unlock.
	waitFor(t, 10*time.Second, "the hold monitor re-armed its watch", func() bool {
		st := h.m.Stats()
		return st.Notifications > before.Notifications && st.Requests > before.Requests
	})
	select {
	case <-h.m.Done():
		t.Fatal("a data change ended the hold")
	default:
	}
	before = h.m.Stats()
	require.NoError(t, h.m.Unlock(ctx))
	assert.Equal(t, int64(1), h.m.Stats().Requests-before.Requests, "Unlock is one delete")
	assert.Equal(t, 0, queueLen(t, fresh(t, h.conn), path))
}

// TestContenders: the queue in order, with each node's data and stat, from
// the package function and the method; a missing path is an empty queue.
func TestContenders(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	q, err := sequential.Contenders(ctx, zktest.Session(t, admin), path)
	require.NoError(t, err)
	assert.Empty(t, q)
	_, err = sequential.Contenders(ctx, zktest.Session(t, admin), "relative")
	require.ErrorIs(t, err, zklocks.ErrBadPath)
	_, err = sequential.Contenders(ctx, nil, path)
	require.ErrorIs(t, err, zklocks.ErrNilSession)

	var cs []contender
	for i := range 3 {
		c := newContender(t, path, sequential.WithData(fmt.Appendf(nil, "c%d", i)))
		cs = append(cs, c)
		if i == 0 {
			require.NoError(t, c.m.Lock(ctx))
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		res := lockAsync(wctx, c.m)
		t.Cleanup(func() { cancel(); <-res })
		waitQueued(t, c.m, c.conn)
	}
	q, err = cs[2].m.Contenders(ctx)
	require.NoError(t, err)
	require.Len(t, q, 3)
	for i, c := range q {
		assert.Equal(t, cs[i].m.Node(), c.Node)
		assert.Equal(t, fmt.Sprintf("c%d", i), string(c.Data))
		assert.Equal(t, cs[i].conn.SessionID(), c.Stat.EphemeralOwner)
		assert.True(t, strings.HasSuffix(c.Node, fmt.Sprintf("%010d", c.Seq)))
	}
	assert.Equal(t, cs[0].m.Token(), q[0].Stat.Czxid, "the holder's token is its node's czxid")
	assert.True(t, slices.IsSortedFunc(q, func(a, b sequential.Contender) int { return int(a.Seq - b.Seq) }))
	require.NoError(t, cs[0].m.Unlock(ctx))
}
