package locktest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/oplog"
	"github.com/zklocks/zklocks/internal/zktest"
)

// testOperationLog: with a logger, a lock writes its operation log (see
// internal/oplog): a waits for nothing, b waits behind a, a releases, b
// acquires, an operator deletes b's node, b loses the hold. Each event is
// written once, by the client it happened to, with its node and token.
func (s *suite) testOperationLog(t T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	recA, recB := NewLogRecorder(), NewLogRecorder()
	a := s.newLoggedClient(t, path, recA.Logger())
	b := s.newLoggedClient(t, path, recB.Logger())

	mustLock(t, ctx, "a", a.l)
	tokenA := a.l.Token()
	acqA := awaitLog(t, ctx, recA, oplog.MsgAcquire, 1)
	s.checkAcquire(t, admin, path, a, acqA)

	res := LockAsync(ctx, b.l)
	wait := awaitLog(t, ctx, recB, oplog.MsgWait, 1)
	if got, want := wait.Str(oplog.KeyWatch), acqA.Str(oplog.KeyNode); got != want {
		t.Errorf("b's wait: %s=%q, want a's node %q", oplog.KeyWatch, got, want)
	}
	if got, want := wait.Str(oplog.KeySession), fmt.Sprintf("%#x", b.sid); got != want {
		t.Errorf("b's wait: %s=%q, want %q", oplog.KeySession, got, want)
	}

	mustUnlock(t, ctx, "a", a.l)
	rel := awaitLog(t, ctx, recA, oplog.MsgRelease, 1)
	if rel.Int(oplog.KeyToken) != tokenA || rel.Str(oplog.KeyNode) != acqA.Str(oplog.KeyNode) || !rel.Has(oplog.KeyHeld) {
		t.Errorf("a's release: %v, want node %s, token %d and held", rel, acqA.Str(oplog.KeyNode), tokenA)
	}

	if r := AwaitLock(t, res, 10*time.Second, "b"); r.Err != nil {
		t.Fatalf("b: Lock after a's Unlock: %v", r.Err)
	}
	tokenB := b.l.Token()
	acqB := awaitLog(t, ctx, recB, oplog.MsgAcquire, 1)
	s.checkAcquire(t, admin, path, b, acqB)
	if tokenB <= tokenA {
		t.Errorf("b's token %d is not larger than a's %d", tokenB, tokenA)
	}

	if err := admin.Delete(acqB.Str(oplog.KeyNode), -1); err != nil { // an operator removes the lock by hand
		t.Fatalf("admin: delete b's node: %v", err)
	}
	lost := awaitLog(t, ctx, recB, oplog.MsgLost, 1)
	// The timeout lock with a lease calls a deleted node an eviction, as
	// its errors do.
	if r := lost.Str(oplog.KeyReason); r != oplog.ReasonNodeDeleted && r != oplog.ReasonEvicted {
		t.Errorf("b's lost: reason %q, want %q", r, oplog.ReasonNodeDeleted)
	}
	if lost.Int(oplog.KeyToken) != tokenB || lost.Str(oplog.KeyNode) != acqB.Str(oplog.KeyNode) {
		t.Errorf("b's lost: %v, want node %s and token %d", lost, acqB.Str(oplog.KeyNode), tokenB)
	}
	if err := b.l.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
		t.Errorf("b: Unlock after the loss: %v, want %v", err, zklocks.ErrLockLost)
	}

	// Once each, and nothing else: a lost hold logs no release.
	if got, want := recA.Msgs(), []string{oplog.MsgAcquire, oplog.MsgRelease}; !slices.Equal(got, want) {
		t.Errorf("a's log: %v, want %v", got, want)
	}
	gotB := slices.DeleteFunc(recB.Msgs(), func(m string) bool { return m == oplog.MsgWait })
	if want := []string{oplog.MsgAcquire, oplog.MsgLost}; !slices.Equal(gotB, want) {
		t.Errorf("b's log without its waits: %v, want %v", gotB, want)
	}
	if msgs := recB.Msgs(); msgs[0] != oplog.MsgWait {
		t.Errorf("b's log: %v, want its wait first", msgs)
	}
	s.checkIdentity(t, path, append(recA.Records(), recB.Records()...))
}

// newLoggedClient is newClient with an operation log written to l.
func (s *suite) newLoggedClient(t T, path string, l *slog.Logger) client {
	t.Helper()
	conn := zktest.Connect(t, zktest.WithSessionTimeout(SessionTimeout))
	lk, err := s.v.New(zktest.Session(t, conn), path, zklocks.WithLogger(l))
	if err != nil {
		t.Fatalf("%s: New(%q, WithLogger): %v", s.v.Name, path, err)
	}
	return client{conn: conn, l: lk, sid: conn.SessionID(), timeout: SessionTimeout}
}

// checkAcquire checks c's acquire record against its Token, its session
// and its node on the ensemble.
func (s *suite) checkAcquire(t T, admin *zk.Conn, path string, c client, rec LogRecord) {
	t.Helper()
	if got, want := rec.Int(oplog.KeyToken), c.l.Token(); got != want || got == 0 {
		t.Errorf("acquire: %s=%d, want Token() %d", oplog.KeyToken, got, want)
	}
	if got, want := rec.Str(oplog.KeySession), fmt.Sprintf("%#x", c.sid); got != want {
		t.Errorf("acquire: %s=%q, want %q", oplog.KeySession, got, want)
	}
	if !rec.Has(oplog.KeyWaited) {
		t.Errorf("acquire: no %s in %v", oplog.KeyWaited, rec)
	}
	nodes := s.requireNodes(t, admin, path, c.sid, "the holder's node")
	if node := rec.Str(oplog.KeyNode); !slices.Contains(nodes, node) {
		t.Errorf("acquire: %s=%q, want the holder's node %v", oplog.KeyNode, node, nodes)
	}
}

// checkIdentity checks that every record names the variant (its Name up to
// the first "/") and the lock path.
func (s *suite) checkIdentity(t T, path string, recs []LogRecord) {
	t.Helper()
	lock, _, _ := strings.Cut(s.v.Name, "/")
	for _, r := range recs {
		if r.Str(oplog.KeyLock) != lock || r.Str(oplog.KeyPath) != path {
			t.Errorf("record %v: want %s=%s %s=%s", r, oplog.KeyLock, lock, oplog.KeyPath, path)
		}
	}
}

// awaitLog waits for the n-th record with message msg.
func awaitLog(t T, ctx context.Context, r *LogRecorder, msg string, n int) LogRecord {
	t.Helper()
	rec, err := r.Await(ctx, msg, n)
	if err != nil {
		t.Fatalf("operation log: %v", err)
	}
	return rec
}
