package sequential_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
)

// A contender that reaches the head of the queue with its clock run out
// (no sync of its answers reaches it, so nothing proves the leader still
// refreshes its session) must not be told it holds: the hold would end
// the moment it began. Lock fails with ErrLockLost and leaves no node.
// Sessions of 4s: 20 ticks of the local ensemble.
func TestLockFailsWhenTheHoldEndsAsItBegins(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	const st = 4 * time.Second
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	holder, err := sequential.New(zktest.Connected(t), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// Every sync B sends is answered with an error no server sends, which
	// proves nothing: B's clock only runs down from its connection's birth.
	w := zktest.NewWire(t)
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		if r.Request.Op == zktest.OpSync {
			r.Err = zktest.CodeUnimplemented
		}
		return zktest.Pass
	})
	bconn := zktest.Connect(t, zktest.WithDialer(w.Dialer()), zktest.WithSessionTimeout(st))
	b, err := sequential.New(zktest.Session(t, bconn), path)
	if err != nil {
		t.Fatal(err)
	}
	locked := locktest.LockAsync(ctx, b)
	waitQueued(t, b, bconn)
	clock := zktest.Clock(t, bconn)
	for clock.Fresh() {
		select {
		case <-ctx.Done():
			t.Fatal("B's clock stayed fresh with every sync failing")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	r := locktest.AwaitLock(t, locked, 20*time.Second, "B")
	if r.Err == nil {
		t.Fatalf("B's Lock = nil with Done closed %v (Err %v); want ErrLockLost", locktest.IsClosed(b.Done()), b.Err())
	}
	if !errors.Is(r.Err, zklocks.ErrLockLost) {
		t.Errorf("B's Lock = %v; want ErrLockLost", r.Err)
	}
	if b.Token() != 0 || !locktest.IsClosed(b.Done()) {
		t.Errorf("after the failed Lock: Token %d, Done closed %v; want 0 and closed", b.Token(), locktest.IsClosed(b.Done()))
	}
	waitFor(t, 10*time.Second, "B's node gone after its failed Lock", func() bool {
		return queueLen(t, fresh(t, admin), path) == 0
	})
}
