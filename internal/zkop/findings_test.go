package zkop_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
	"github.com/zklocks/zklocks/internal/zktest"
)

// A server older than 3.5.3 answers the create-container request with
// UNIMPLEMENTED, which go-zookeeper v1.0.4 reports as a bare "unknown
// error: -6". EnsureParents must then make the lock path a persistent
// node, not fail the Lock.
func TestEnsureParentsFallsBackWithoutContainers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := zktest.NewWire(t)
	refused := 0
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		if r.Request.Op == zktest.OpCreateContainer {
			refused++
			r.Err, r.Body = zktest.CodeUnimplemented, nil
		}
		return zktest.Pass
	})
	conn := zktest.Connect(t, zktest.WithDialer(w.Dialer()))
	c := zkop.New(conn, zktest.Clock(t, conn))
	path := zktest.LockPath(t) + "/a/lock"
	if err := c.EnsureParents(ctx, path, zkpath.Ancestors(path), true, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("EnsureParents against a server without containers: %v; want the persistent fallback", err)
	}
	if refused == 0 {
		t.Fatal("no create-container request was sent, so none was refused")
	}
	ok, stat, err := conn.Exists(path)
	if err != nil || !ok {
		t.Fatalf("the lock path after the fallback: exists=%v, %v", ok, err)
	}
	if stat.EphemeralOwner != 0 {
		t.Errorf("the lock path has ephemeralOwner %#x; want 0, a persistent node", stat.EphemeralOwner)
	}
}

// The hold's clock counts from the send time of a request, and only once
// a later request through the leader, sent a quarter of a session
// timeout after the first one's answer, has been answered too (see
// internal/liveness): an answered sync alone proves nothing about
// itself. It is read on the monotonic clock, so that a wall-clock step
// moves no deadline built on it.
func TestLeaderHeardIsSendTimeOfAProvenRequestOnMonotonicClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const delay = 300 * time.Millisecond
	w := zktest.NewWire(t)
	conn := zktest.Connect(t, zktest.WithDialer(w.Dialer()))
	c := zkop.New(conn, zktest.Clock(t, conn))
	path := zktest.LockPath(t)

	slow := make(chan struct{})
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		if r.Request.Op == zktest.OpSync {
			<-slow // the answers take delay to come back
		}
		return zktest.Pass
	})
	go func() { time.Sleep(delay); close(slow) }()
	before := time.Now()
	if err := c.Sync(ctx, path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Sync: %v", err)
	}
	answered := time.Now()
	var heard time.Time
	for heard = c.LeaderHeard(); heard.Before(before); heard = c.LeaderHeard() {
		if err := zkop.Sleep(ctx, 5*time.Millisecond); err != nil {
			t.Fatalf("LeaderHeard() still %v before the sync's send time %v after its answer", before.Sub(heard), time.Since(answered))
		}
	}
	provenAfter := time.Since(answered)
	if g := zktest.DefaultSessionTimeout / 4; provenAfter < g {
		t.Errorf("the clock passed the sync's send time %v after its answer; want no sooner than a later request sent %v after it", provenAfter, g)
	}
	if !strings.Contains(heard.String(), "m=") {
		t.Errorf("LeaderHeard() = %v has no monotonic clock reading: a wall-clock step would move the deadline", heard)
	}
	// The keeper's own syncs go on meanwhile, so the proven moment may be
	// the send time of a later request than ours, but never one that is
	// still to come.
	if now := time.Now(); heard.After(now) {
		t.Errorf("LeaderHeard is %v in the future", heard.Sub(now))
	}
}

// The hazard behind DeleteOnSession, as go-zookeeper v1.0.4 has it: a
// request queued while the client has no connection is kept when the
// reconnection finds the session expired, and goes out on the new
// session. A versioned delete of a fixed path then removes another
// client's node of the same version. DeleteOnSession sends nothing then.
func TestQueuedDeleteOutlivesExpiredSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const st = time.Second
	acl := zk.WorldACL(zk.PermAll)
	for _, guarded := range []bool{false, true} {
		name := map[bool]string{false: "raw delete", true: "DeleteOnSession"}[guarded]
		t.Run(name, func(t *testing.T) {
			w := zktest.NewWire(t)
			defer w.ReleaseDials()
			conn := zktest.Connect(t, zktest.WithDialer(w.Dialer()), zktest.WithSessionTimeout(st))
			other := zktest.Connect(t)
			c := zkop.New(conn, zktest.Clock(t, conn))
			path := zktest.LockPath(t)
			if err := c.EnsureParents(ctx, path, zkpath.Ancestors(path), false, acl); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Create(path, nil, zk.FlagEphemeral, acl); err != nil {
				t.Fatal(err)
			}
			sid := conn.SessionID()
			probe := zktest.NewSessionProbe(t, conn)

			w.HoldDials() // a reconnection that takes longer than the session timeout
			w.BreakAll()
			zktest.WaitNoSession(t, conn)
			deleted := make(chan error, 1)
			go func() {
				if guarded {
					deleted <- c.DeleteOnSession(ctx, path, 0, sid)
				} else {
					deleted <- conn.Delete(path, 0)
				}
			}()
			probe.WaitExpired(t, other, 10*time.Second)
			// other can see the probe's node gone while path, an ephemeral
			// of the same expired session, is still there (seen once in a
			// whole-suite run): give its deletion a few seconds.
			var err error
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if _, err = other.Create(path, nil, zk.FlagEphemeral, acl); !errors.Is(err, zk.ErrNodeExists) {
					break
				}
			}
			if err != nil {
				t.Fatalf("the next holder's create: %v", err)
			}
			if guarded {
				if err := <-deleted; !errors.Is(err, zkop.ErrNoSessionNow) || !zkop.Transient(err) {
					t.Errorf("DeleteOnSession without a session: %v, want ErrNoSessionNow (Transient)", err)
				}
			}
			w.ReleaseDials()
			if !guarded {
				if err := <-deleted; err != nil {
					t.Logf("the queued delete: %v", err)
				}
			}
			if _, err := other.Sync(path); err != nil {
				t.Fatal(err)
			}
			ok, stat, err := other.Exists(path)
			switch {
			case err != nil:
				t.Fatal(err)
			case !guarded && ok:
				t.Errorf("the delete queued on session %#x did not remove the next holder's node (owner %#x): go-zookeeper no longer replays it, and DeleteOnSession's reason is gone", sid, stat.EphemeralOwner)
			case !guarded:
				t.Logf("hazard shown: the delete queued on session %#x removed the next holder's node on the next session", sid)
			case !ok:
				t.Error("the next holder's node is gone, with DeleteOnSession")
			}
		})
	}
}
