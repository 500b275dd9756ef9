package naive_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/history"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/naive"
)

var variant = locktest.Variant{
	Name: "naive",
	New: func(s *zklocks.Session, path string, opts ...zklocks.Option) (zklocks.Locker, error) {
		return naive.New(s, path, opts...)
	},
	Layout: locktest.NodeAtPath,
}

func TestConformance(t *testing.T) { locktest.Run(t, variant) }

func newMutex(t *testing.T, conn *zk.Conn, path string, sessionTimeout time.Duration) *naive.Mutex {
	t.Helper()
	s, err := zklocks.NewSession(conn, zklocks.WithSessionTimeout(sessionTimeout))
	if err != nil {
		t.Fatal(err)
	}
	m, err := naive.New(s, path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustSync makes conn's server catch up with the leader, so that conn's
// next read sees every write that has completed (ZooKeeper's reads on one
// session are not linearizable with writes made on another).
func mustSync(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	if _, err := conn.Sync(path); err != nil {
		t.Fatalf("sync %s: %v", path, err)
	}
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitWaiting polls m's request counter until its Lock (running in another
// goroutine, reporting to res) has sent its create and its exists watch.
func waitWaiting(t *testing.T, ctx context.Context, m *naive.Mutex, res <-chan error) {
	t.Helper()
	for m.Stats().Requests < 2 {
		select {
		case err := <-res:
			t.Fatalf("Lock returned %v while another session held the lock", err)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// The lock node is the path itself, ephemeral, owned by the holder's
// session; its parents are persistent; the token is its czxid.
func TestNodeIsThePath(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	conn := zktest.Connect(t)
	path := zktest.LockPath(t) + "/deep/orders"
	m := newMutex(t, conn, path, zktest.DefaultSessionTimeout)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	_, stat, err := conn.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	if stat.EphemeralOwner != conn.SessionID() {
		t.Errorf("lock node owner %#x, want our session %#x", stat.EphemeralOwner, conn.SessionID())
	}
	if m.Token() != stat.Czxid {
		t.Errorf("Token() = %d, want the node's czxid %d", m.Token(), stat.Czxid)
	}
	_, parent, err := conn.Get(path[:len(path)-len("/orders")])
	if err != nil || parent.EphemeralOwner != 0 {
		t.Errorf("parent: %+v, %v; want a persistent node", parent, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := conn.Exists(path); ok {
		t.Error("lock node still there after Unlock")
	}
}

// Lock right after zk.Connect, before the client has a session: the
// create waits in go-zookeeper's queue and goes out on the first session.
// The lock must recognise that node as its own.
func TestLockBeforeSession(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	for i := range 3 {
		conn, _, err := zk.Connect(zktest.Servers(t), zktest.DefaultSessionTimeout, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conn.Close)
		m := newMutex(t, conn, path, zktest.DefaultSessionTimeout)
		if err := m.Lock(ctx); err != nil {
			t.Fatalf("attempt %d: Lock before the session was up: %v", i, err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatalf("attempt %d: Unlock: %v", i, err)
		}
		mustSync(t, admin, path)
		if ok, _, _ := admin.Exists(path); ok {
			t.Fatalf("attempt %d: lock node left after Unlock", i)
		}
		conn.Close()
	}
}

// The holder's session dies without Unlock (its process is partitioned
// away until the servers expire the session): the ephemeral node goes
// with it and the waiter gets the lock.
func TestHolderSessionExpiresWithoutUnlock(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	holderConn := zktest.Connect(t, zktest.WithSessionTimeout(time.Second))
	waiterConn := zktest.Connect(t)
	holder := newMutex(t, holderConn, path, time.Second)
	waiter := newMutex(t, waiterConn, path, zktest.DefaultSessionTimeout)

	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	acquired := make(chan error, 1)
	go func() { acquired <- waiter.Lock(ctx) }()
	waitWaiting(t, ctx, waiter, acquired)
	start := time.Now()
	zktest.ExpireSession(t, holderConn) // returns once the servers have expired the session
	if err := <-acquired; err != nil {
		t.Fatalf("waiter: Lock after the holder's session expired: %v", err)
	}
	t.Logf("waiter holds the lock %v after the holder was cut off (session timeout 1s)", time.Since(start).Round(time.Millisecond))
	if waiter.Token() <= holder.Token() {
		t.Errorf("waiter's token %d not above the dead holder's %d", waiter.Token(), holder.Token())
	}
	if err := holder.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
		t.Errorf("holder: Unlock after its session expired: %v, want %v", err, zklocks.ErrLockLost)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatalf("waiter: Unlock: %v", err)
	}
}

// Our Unlock must never delete a lock node that is not ours: after our
// node was deleted by hand and someone else took the lock, whether on
// another session or on our own connection (same session: only the czxid
// tells the nodes apart).
func TestUnlockNeverDeletesAnotherClientsNode(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sameSession bool
	}{{"OtherSession", false}, {"SameSession", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t, 20*time.Second)
			path := zktest.LockPath(t)
			admin := zktest.Connect(t)
			connA := zktest.Connect(t)
			connB := connA
			if !tc.sameSession {
				connB = zktest.Connect(t)
			}
			a := newMutex(t, connA, path, zktest.DefaultSessionTimeout)
			b := newMutex(t, connB, path, zktest.DefaultSessionTimeout)

			if err := a.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if err := admin.Delete(path, -1); err != nil { // an operator "fixes" a stuck lock
				t.Fatal(err)
			}
			<-a.Done()
			if err := b.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if err := a.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
				t.Errorf("a: Unlock of a lost hold: %v, want %v", err, zklocks.ErrLockLost)
			}
			mustSync(t, admin, path)
			_, stat, err := admin.Get(path)
			if err != nil {
				t.Fatalf("b's lock node after a's Unlock: %v", err)
			}
			if stat.Czxid != b.Token() || stat.EphemeralOwner != connB.SessionID() {
				t.Fatalf("lock node %+v is not b's (token %d)", stat, b.Token())
			}
			select {
			case <-b.Done():
				t.Fatal("b: Done() closed")
			default:
			}
			if err := b.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// What the notes' release does instead: delete(path, -1) from the old
// holder's session removes whatever node is at the path, the new
// holder's included. This test shows the bug; Unlock does not have it.
func TestNotesReleaseDeletesAnotherClientsLock(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	oldHolder := zktest.Connect(t)
	b := newMutex(t, zktest.Connect(t), path, zktest.DefaultSessionTimeout)
	if err := b.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := oldHolder.Delete(path, -1); err != nil { // the notes' releaseDistributedLock
		t.Fatalf("delete(path, -1): %v", err)
	}
	locktest.RequireClosedWithin(t, b.Done(), zktest.DefaultSessionTimeout+time.Second, "b, after its node was deleted")
	t.Log("delete with version -1 removed another client's lock: the holder b lost it")
	mustSync(t, admin, path)
	if ok, _, _ := admin.Exists(path); ok {
		t.Fatal("lock node still exists")
	}
	if err := b.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
		t.Errorf("b: Unlock: %v, want %v", err, zklocks.ErrLockLost)
	}
}

// Any error other than "node exists" ends Lock at once (the notes' demo
// retries every error forever): here the parent does not let us create.
func TestLockStopsOnOtherErrors(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	conn := zktest.Connect(t)
	base := zktest.LockPath(t)
	for _, p := range []string{zktest.Root, base} {
		acl := zk.WorldACL(zk.PermAll)
		if p == base {
			acl = zk.WorldACL(zk.PermRead | zk.PermDelete)
		}
		if _, err := conn.Create(p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = conn.Delete(base, -1) })
	m := newMutex(t, conn, base+"/lock", zktest.DefaultSessionTimeout)
	err := m.Lock(ctx)
	if !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Lock under a read-only parent: %v, want an error wrapping %v", err, zk.ErrNoAuth)
	}
	if n := m.Stats().Requests; n != 1 {
		t.Errorf("Lock sent %d requests, want 1 (no retry)", n)
	}
	t.Logf("Lock: %v", err)
}

// A waiter whose own session expires while it waits gives up with
// ErrLockLost instead of waiting on a watch that will never fire.
func TestWaiterSessionExpires(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	holder := newMutex(t, zktest.Connect(t), path, zktest.DefaultSessionTimeout)
	waiterConn := zktest.Connect(t, zktest.WithSessionTimeout(time.Second))
	waiter := newMutex(t, waiterConn, path, time.Second)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() { res <- waiter.Lock(ctx) }()
	waitWaiting(t, ctx, waiter, res)
	zktest.ExpireSession(t, waiterConn)
	select {
	case err := <-res:
		if !errors.Is(err, zklocks.ErrLockLost) || !errors.Is(err, zk.ErrSessionExpired) {
			t.Fatalf("waiter: Lock: %v, want %v wrapping %v", err, zklocks.ErrLockLost, zk.ErrSessionExpired)
		}
		t.Logf("waiter: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("waiter still waiting after its session expired")
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// The herd effect, on purpose: every release wakes every waiter, and all
// but one of them send a create that fails. With 8 contenders more than
// one waiter must wake per release on average.
func TestHerdEffect(t *testing.T) {
	const contenders, rounds = 8, 5
	ctx := testContext(t, 60*time.Second)
	path := zktest.LockPath(t)
	mutexes := make([]*naive.Mutex, contenders)
	for i := range mutexes {
		mutexes[i] = newMutex(t, zktest.Connect(t), path, zktest.DefaultSessionTimeout)
	}
	rec := history.NewRecorder()
	g, gctx := errgroup.WithContext(ctx)
	for i, m := range mutexes {
		g.Go(func() error {
			for range rounds {
				if err := m.Lock(gctx); err != nil {
					return err
				}
				exit := rec.Enter(fmt.Sprint(i), m.Token())
				exit()
				if err := m.Unlock(gctx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := history.Check(rec.History()); err != nil {
		t.Fatal(err)
	}
	var total zklocks.Stats
	for _, m := range mutexes {
		s := m.Stats()
		total.Requests += s.Requests
		total.Notifications += s.Notifications
	}
	releases := float64(contenders * rounds)
	perRelease := float64(total.Notifications) / releases
	t.Logf("%d contenders, %d releases: %.2f watch notifications per release, %.2f requests per acquisition",
		contenders, contenders*rounds, perRelease, float64(total.Requests)/releases)
	if perRelease <= 1 {
		t.Errorf("%.2f notifications per release; the herd should wake more than one waiter per release", perRelease)
	}
}
