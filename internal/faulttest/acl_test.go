package faulttest

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// Access control: "don't delete another client's lock" enforced by the
// server rather than by client code. Alice locks with
// WithACL(digest alice:secret, all permissions); Bob, authenticated as
// someone else, can neither delete nor overwrite her node, nor queue on her
// lock: each attempt fails with zk.ErrNoAuth, and Alice's hold is
// untouched.
//
// ZooKeeper checks a delete against the ACL of the node's parent, and a
// create against the parent too. The lock's own parents must therefore
// carry the ACL: the lock path here is created by Alice's lock (with her
// ACL) under a world-writable test directory. The second case shows what
// happens when the lock node's parent was made world-writable beforehand:
// Bob deletes Alice's node despite its ACL, and Alice's Done reports the
// loss.
func TestACL(t *testing.T) {
	aliceACL := zk.DigestACL(zk.PermAll, "alice", "secret")
	forEachVariant(t, func(t *testing.T, v *variant) {
		t.Run("protected", func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			tp := newTape()
			admin := zktest.Connect(t)
			base := worldDir(t, admin)
			path := base + "/acl/lock" // "acl" (and, for the queue family, "lock") made by Alice's lock
			alice := newClient(t, tp, v, path, "alice", withACL(aliceACL))
			if err := alice.conn.AddAuth("digest", []byte("alice:secret")); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { removeTree(alice.conn, base+"/acl") })
			bob := newClient(t, tp, v, path, "bob")
			if err := bob.conn.AddAuth("digest", []byte("bob:other")); err != nil {
				t.Fatal(err)
			}

			if err := alice.l.Lock(alice.ctx(ctx)); err != nil {
				t.Fatalf("alice: Lock: %v", err)
			}
			h := tp.enter(alice)
			nodes := ownNodes(t, alice.conn, alice, alice.conn.SessionID())
			if len(nodes) != 1 {
				t.Fatalf("alice holds with nodes %v", nodes)
			}
			node := nodes[0]
			if acl, _, err := alice.conn.GetACL(node); err != nil || len(acl) != 1 || acl[0] != aliceACL[0] {
				t.Errorf("alice's node %s has ACL %v (%v); want %v", node, acl, err, aliceACL)
			}

			if err := bob.conn.Delete(node, -1); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("bob: delete alice's node: %v; want %v", err, zk.ErrNoAuth)
			}
			if _, err := bob.conn.Set(node, []byte("bob was here"), -1); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("bob: overwrite alice's node: %v; want %v", err, zk.ErrNoAuth)
			}
			bctx, cancel := context.WithTimeout(bob.ctx(ctx), 5*time.Second)
			start := time.Now()
			berr := bob.l.Lock(bctx)
			cancel()
			switch {
			case berr == nil:
				t.Error("bob: Lock succeeded on alice's lock")
				_ = bob.l.Unlock(bob.ctx(ctx))
			case !errors.Is(berr, zk.ErrNoAuth):
				t.Errorf("bob: Lock: %v; want an error wrapping %v", berr, zk.ErrNoAuth)
			default:
				t.Logf("bob: Lock failed after %v: %v", time.Since(start).Round(time.Millisecond), berr)
			}

			if locktest.IsClosed(alice.l.Done()) {
				t.Error("alice: Done closed by bob's attempts")
			}
			if len(ownNodes(t, alice.conn, alice, alice.conn.SessionID())) != 1 {
				t.Error("alice: node gone after bob's attempts")
			}
			tp.leave(h, stillHeld)
			if err := alice.l.Unlock(alice.ctx(ctx)); err != nil {
				t.Errorf("alice: Unlock: %v", err)
			}
			holds, double, belief := checkHistory(t, tp, v, path)
			left := nodesLeft(t, alice.conn, v, path, sessionTimeout+time.Second)
			report{fault: "acl-protected", variant: v.name, holds: holds, double: double, left: left, recover: -1,
				belief: belief, extra: []string{"bob_lock=" + strconv.Quote(errText(berr)), "bob_delete=no_auth", "bob_set=no_auth"}}.log(t)
		})

		t.Run("parent-world-writable", func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			tp := newTape()
			admin := zktest.Connect(t)
			path := worldDir(t, admin) + "/lock"
			if v.layout == locktest.ChildrenOfPath {
				// Someone made the lock path beforehand, open to all.
				if _, err := admin.Create(path, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = admin.Delete(path, -1) })
			}
			alice := newClient(t, tp, v, path, "alice", withACL(aliceACL))
			if err := alice.conn.AddAuth("digest", []byte("alice:secret")); err != nil {
				t.Fatal(err)
			}
			bob := zktest.Connect(t)
			if err := bob.AddAuth("digest", []byte("bob:other")); err != nil {
				t.Fatal(err)
			}
			if err := alice.l.Lock(alice.ctx(ctx)); err != nil {
				t.Fatalf("alice: Lock: %v", err)
			}
			h := tp.enter(alice)
			done := alice.l.Done()
			node := ownNodes(t, alice.conn, alice, alice.conn.SessionID())[0]
			if _, err := bob.Set(node, []byte("bob was here"), -1); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("bob: overwrite alice's node: %v; want %v (the node's own ACL)", err, zk.ErrNoAuth)
			}
			if err := bob.Delete(node, -1); err != nil {
				t.Fatalf("bob: delete alice's node under a world-writable parent: %v; ZooKeeper checks the parent's ACL, so this should succeed", err)
			}
			select {
			case <-done:
			case <-time.After(sessionTimeout + lossSlack):
				t.Fatal("alice: Done still open after bob deleted her node")
			}
			tp.leave(h, tp.now())
			if err := alice.l.Unlock(alice.ctx(ctx)); !errors.Is(err, zklocks.ErrLockLost) {
				t.Errorf("alice: Unlock after bob deleted her node: %v; want %v", err, zklocks.ErrLockLost)
			}
			holds, double, belief := checkHistory(t, tp, v, path)
			left := nodesLeft(t, admin, v, path, sessionTimeout+time.Second)
			report{fault: "acl-parent-world-writable", variant: v.name, holds: holds, double: double, left: left,
				recover: -1, belief: belief, extra: []string{"bob_delete=succeeded", "alice_done=closed"}}.log(t)
		})
	})
}

// worldDir creates a fresh world-writable directory for one test.
func worldDir(t *testing.T, admin *zk.Conn) string {
	t.Helper()
	if _, err := admin.Create(zktest.Root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	dir := zktest.LockPath(t)
	if _, err := admin.Create(dir, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(admin, dir) })
	return dir
}

// removeTree deletes path and everything below it that conn may delete.
func removeTree(conn *zk.Conn, path string) {
	kids, _, err := conn.Children(path)
	if err != nil {
		return
	}
	for _, k := range kids {
		removeTree(conn, path+"/"+k)
	}
	_ = conn.Delete(path, -1)
}
