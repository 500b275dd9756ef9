package locktest

import (
	"errors"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zktest"
)

// lossSlack is what the suite allows beyond the session timeout for a
// lost hold to become visible through Done.
const lossSlack = time.Second

// testCrashRelease: a holder that goes away without Unlock (its session
// expires, or it closes its connection) releases the lock; a waiter then
// gets it, and the holder's late Unlock does not touch the waiter's node.
func (s *suite) testCrashRelease(t T) {
	t.Run("SessionExpired", func(t T) {
		ctx := testContext(t, 30*time.Second)
		path := zktest.LockPath(t)
		cutter := zktest.NewCutter()
		h := s.newClient(t, path, ExpirySessionTimeout, zktest.WithDialer(cutter.Dialer()))
		w := s.newClient(t, path, 0)
		mustLock(t, ctx, "holder", h.l)
		tokenH := h.l.Token()
		res, _ := s.lockQueued(t, ctx, ctx, w.conn, path, w)

		cutAt := time.Now()
		cutter.Cut() // the holder's process is partitioned away: no Unlock, no heartbeats
		r := AwaitLock(t, res, 2*ExpirySessionTimeout+10*time.Second, "waiter")
		if r.Err != nil {
			t.Fatalf("waiter: Lock after the holder's session expired: %v", r.Err)
		}
		t.Logf("waiter acquired %v after the holder was cut off (session timeout %v)",
			r.At.Sub(cutAt).Round(time.Millisecond), ExpirySessionTimeout)
		if w.l.Token() <= tokenH {
			t.Errorf("waiter's token %d is not larger than the crashed holder's %d", w.l.Token(), tokenH)
		}
		// The holder has been cut off for longer than its session timeout
		// by now, so it must know it lost the lock.
		RequireClosedWithin(t, h.l.Done(), ExpirySessionTimeout+lossSlack, "holder after its session expired")

		cutter.Heal()
		if err := h.l.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
			t.Errorf("holder: Unlock after its session expired: %v, want %v", err, zklocks.ErrLockLost)
		}
		if IsClosed(w.l.Done()) {
			t.Fatal("waiter: Done() closed after the old holder's Unlock")
		}
		s.requireNodes(t, w.conn, path, w.sid, "waiter's hold after the old holder's Unlock")
		mustUnlock(t, ctx, "waiter", w.l)
	})

	t.Run("ConnClosed", func(t T) {
		ctx := testContext(t, 20*time.Second)
		path := zktest.LockPath(t)
		h := s.newClient(t, path, 0)
		w := s.newClient(t, path, 0)
		mustLock(t, ctx, "holder", h.l)
		res, _ := s.lockQueued(t, ctx, ctx, w.conn, path, w)

		closedAt := time.Now()
		h.conn.Close() // the process exits without Unlock; closing ends its session at once
		r := AwaitLock(t, res, SessionTimeout+10*time.Second, "waiter")
		if r.Err != nil {
			t.Fatalf("waiter: Lock after the holder closed its connection: %v", r.Err)
		}
		t.Logf("waiter acquired %v after the holder's conn.Close()", r.At.Sub(closedAt).Round(time.Millisecond))
		RequireClosedWithin(t, h.l.Done(), SessionTimeout+lossSlack, "holder after conn.Close()")
		if err := h.l.Unlock(ctx); err == nil {
			t.Error("holder: Unlock on a closed connection succeeded; want an error")
		}
		s.requireNodes(t, w.conn, path, w.sid, "waiter's hold after the old holder's Unlock")
		mustUnlock(t, ctx, "waiter", w.l)
	})
}

// testDoneOnLoss: Done closes when the hold is lost without Unlock, Token
// keeps returning the lost hold's token until Unlock, and Unlock then
// reports the loss.
func (s *suite) testDoneOnLoss(t T) {
	t.Run("NodeDeleted", func(t T) {
		ctx := testContext(t, 20*time.Second)
		path := zktest.LockPath(t)
		h := s.newClient(t, path, 0)
		admin := zktest.Connect(t)
		mustLock(t, ctx, "holder", h.l)
		done, token := h.l.Done(), h.l.Token()
		for _, n := range s.requireNodes(t, admin, path, h.sid, "holder's node") {
			if err := admin.Delete(n, -1); err != nil { // an operator removes the lock by hand
				t.Fatalf("admin: delete %s: %v", n, err)
			}
		}
		took := RequireClosedWithin(t, done, SessionTimeout+lossSlack, "holder after its node was deleted")
		t.Logf("Done() closed %v after the node was deleted", took.Round(time.Millisecond))
		if !IsClosed(h.l.Done()) {
			t.Error("holder: Done() open after the loss, want a closed channel")
		}

		// Someone else takes the lock; the old holder's Unlock must report
		// the loss and leave the new holder's node alone.
		o := s.newClient(t, path, 0)
		mustLock(t, ctx, "other", o.l)
		// Until Unlock the lost hold keeps its token, so a holder that has
		// not noticed the loss presents a token smaller than the new
		// holder's, which a fenced resource refuses.
		if tok := h.l.Token(); tok != token || tok == 0 {
			t.Errorf("holder: Token() = %d after the loss, want the lost hold's %d until Unlock", tok, token)
		}
		if o.l.Token() <= token {
			t.Errorf("other: Token() = %d, not larger than the lost hold's %d", o.l.Token(), token)
		}
		if err := h.l.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
			t.Errorf("holder: Unlock after losing the lock: %v, want %v", err, zklocks.ErrLockLost)
		}
		if tok := h.l.Token(); tok != 0 {
			t.Errorf("holder: Token() = %d after Unlock reported the loss, want 0", tok)
		}
		if IsClosed(o.l.Done()) {
			t.Fatal("other: Done() closed after the old holder's Unlock")
		}
		s.requireNodes(t, admin, path, o.sid, "the new holder's node after the old holder's Unlock")
		mustUnlock(t, ctx, "other", o.l)
	})

	t.Run("SessionExpired", func(t T) {
		ctx := testContext(t, 30*time.Second)
		path := zktest.LockPath(t)
		h := s.newClient(t, path, ExpirySessionTimeout)
		mustLock(t, ctx, "holder", h.l)
		closedAt := make(chan time.Time, 1)
		go func(done <-chan struct{}) { <-done; closedAt <- time.Now() }(h.l.Done())
		start := time.Now()
		// Cuts the holder off until the servers have expired its session,
		// then lets it reconnect (it gets a new session).
		zktest.ExpireSession(t, h.conn)
		select {
		case at := <-closedAt:
			took := at.Sub(start)
			t.Logf("Done() closed %v after the cut (session timeout %v)", took.Round(time.Millisecond), ExpirySessionTimeout)
			if took > ExpirySessionTimeout+lossSlack {
				t.Errorf("Done() closed %v after the cut, want within %v", took, ExpirySessionTimeout+lossSlack)
			}
		case <-time.After(lossSlack):
			t.Fatalf("holder: Done() still open %v after the cut and its session's expiry", time.Since(start))
		}
		if err := h.l.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
			t.Errorf("holder: Unlock after its session expired: %v, want %v", err, zklocks.ErrLockLost)
		}
		s.requireNoNodes(t, h.conn, path, h, "the session's expiry")
		// The same Mutex works again on the connection's new session.
		mustLock(t, ctx, "holder (new session)", h.l)
		mustUnlock(t, ctx, "holder (new session)", h.l)
	})
}

// testDoneOnUnlock: Done is closed when not held, open while held, and
// closed by the time Unlock returns.
func (s *suite) testDoneOnUnlock(t T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	c := s.newClient(t, path, 0)
	if !IsClosed(c.l.Done()) {
		t.Error("Done() before any Lock is open, want a closed channel")
	}
	mustLock(t, ctx, "c", c.l)
	done := c.l.Done()
	if IsClosed(done) {
		t.Fatal("Done() closed right after Lock")
	}
	mustUnlock(t, ctx, "c", c.l)
	if !IsClosed(done) {
		t.Error("the hold's Done() still open after Unlock returned")
	}
	if !IsClosed(c.l.Done()) {
		t.Error("Done() after Unlock is open, want a closed channel")
	}
	if tok := c.l.Token(); tok != 0 {
		t.Errorf("Token() = %d after Unlock, want 0", tok)
	}
}

// testWaiterLoss: a waiter whose own session expires while it waits (its
// watch, or the read before it, in flight) gives up with ErrLockLost
// wrapping zk.ErrSessionExpired, whichever request met the expiry first,
// instead of waiting on a watch that the servers dropped with the session.
// The same lock works again on the connection's new session.
func (s *suite) testWaiterLoss(t T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	h := s.newClient(t, path, 0)
	w := s.newClient(t, path, ExpirySessionTimeout)
	mustLock(t, ctx, "holder", h.l)
	res, _ := s.lockQueued(t, ctx, ctx, h.conn, path, w)

	zktest.ExpireSession(t, w.conn)
	r := AwaitLock(t, res, lossSlack+5*time.Second, "waiter after its session expired")
	if !errors.Is(r.Err, zklocks.ErrLockLost) || !errors.Is(r.Err, zk.ErrSessionExpired) {
		t.Fatalf("waiter: Lock after its session expired: %v, want %v wrapping %v", r.Err, zklocks.ErrLockLost, zk.ErrSessionExpired)
	}
	t.Logf("waiter: %v", r.Err)
	s.requireNoNodes(t, w.conn, path, w, "the waiter's expiry")

	mustUnlock(t, ctx, "holder", h.l)
	mustLock(t, ctx, "waiter (new session)", w.l)
	mustUnlock(t, ctx, "waiter (new session)", w.l)
}
