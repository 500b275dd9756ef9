package locktest

import (
	"errors"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
)

// revocable is a lock whose holder can see a revocation request.
type revocable interface{ Revoked() <-chan struct{} }

// testRevoke: a revocation request (sequential.Revoke, zklocks revoke) is
// a request, never a loss. A lock whose holder can see it (Revoked) keeps
// its hold through its own next writes to its node (a renewal, a
// re-entry) until it unlocks; any other lock is refused with ErrBadPath,
// its hold untouched.
func (s *suite) testRevoke(t T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	h := s.newClient(t, path, 0)
	mustLock(t, ctx, "holder", h.l)
	done := h.l.Done()
	node, err := sequential.Revoke(ctx, zktest.Connected(t), path)
	r, ok := h.l.(revocable)
	switch {
	case !ok && !errors.Is(err, zklocks.ErrBadPath):
		t.Fatalf("Revoke of a %s lock = %q, %v; want it refused with ErrBadPath (its holder cannot see the request)", s.v.Name, node, err)
	case !ok:
		t.Logf("refused: %v", err)
	case err != nil:
		t.Fatalf("Revoke: %v", err)
	default:
		RequireClosedWithin(t, r.Revoked(), 5*time.Second, "holder's Revoked after the request")
		if s.v.Reentrant { // a re-entry writes the node (in node mode)
			mustLock(t, ctx, "holder, again", h.l)
			mustUnlock(t, ctx, "holder, inner", h.l)
		}
		s.awaitOwnWrite(t, h, node)
	}
	if IsClosed(done) {
		t.Fatalf("the hold ended after a revocation request: %v", errOf(h.l))
	}
	mustUnlock(t, ctx, "holder", h.l)
}

// awaitOwnWrite gives a holder that keeps state in its node (a lease's
// renewals) a session timeout to write it again over the request.
func (s *suite) awaitOwnWrite(t T, h client, node string) {
	t.Helper()
	deadline := time.Now().Add(SessionTimeout)
	for time.Now().Before(deadline) {
		data, _, err := h.conn.Get(node)
		if err != nil {
			t.Fatalf("read the holder's node after a revocation request: %v (the hold: %v)", err, errOf(h.l))
		}
		if !hold.IsRevokeRequest(data) {
			return // written again by its holder
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// errOf is a lock's Err, when it has one.
func errOf(l zklocks.Locker) error {
	if e, ok := l.(interface{ Err() error }); ok {
		return e.Err()
	}
	return nil
}
