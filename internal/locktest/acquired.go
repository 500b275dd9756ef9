package locktest

import (
	"errors"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zktest"
)

// testHoldEndingAsItBegins: a contender let in with its clock run out
// (every sync it sends is answered with an error no server sends, which
// proves nothing, so its clock only runs down from its connection's
// birth) is never told it holds a hold that has already ended: Lock fails
// with ErrLockLost and leaves no node, or, when the lock's own writes
// kept its clock fresh, returns a hold that lasts.
// Sessions of 4s: 20 ticks of the local ensemble.
func (s *suite) testHoldEndingAsItBegins(t T) {
	ctx := testContext(t, 60*time.Second)
	const st = 4 * time.Second
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	h := s.newClient(t, path, 0)
	mustLock(t, ctx, "holder", h.l)

	w := zktest.NewWire(t)
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		if r.Request.Op == zktest.OpSync {
			r.Err = zktest.CodeUnimplemented
		}
		return zktest.Pass
	})
	b := s.newClient(t, path, st, zktest.WithDialer(w.Dialer()))
	res, _ := s.lockQueued(t, ctx, ctx, admin, path, b)
	clock := zktest.Clock(t, b.conn)
	if err := poll(ctx, func() (bool, error) { return !clock.Fresh(), nil }); err != nil {
		t.Fatalf("B's clock stayed fresh with every sync failing: %v", err)
	}
	mustUnlock(t, ctx, "holder", h.l)
	r := AwaitLock(t, res, 20*time.Second, "B")
	done := b.l.Done() // taken as Lock returns: what B is told
	w.OnReply(nil)     // syncs answered again: the clean-up may go on
	if r.Err == nil {
		// A lock whose own writes go through the leader (a lease's
		// probes and renewals) keeps its clock fresh without syncs: it
		// may hold, but only a live hold.
		if IsClosed(done) {
			t.Fatalf("B's Lock = nil with Done closed (Err %v); want ErrLockLost, or a hold that lasts", errOf(b.l))
		}
		t.Logf("B holds: its own writes kept its clock fresh")
		mustUnlock(t, ctx, "B", b.l)
	} else {
		if !errors.Is(r.Err, zklocks.ErrLockLost) {
			t.Errorf("B's Lock = %v; want ErrLockLost", r.Err)
		}
		if b.l.Token() != 0 || !IsClosed(done) {
			t.Errorf("after the failed Lock: Token %d, Done closed %v; want 0 and closed", b.l.Token(), IsClosed(done))
		}
	}
	s.requireNoNodes(t, admin, path, b, "a Lock whose hold ended as it began")
}
