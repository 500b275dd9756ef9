package timeout_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/timeout"
)

// The tests of the "held" record's place: it is written after Lock
// returns, and a hold whose record has not landed is still never evicted
// while its holder believes in it (docs/04-timeout.md, "Why a judge never
// evicts a live holder: the four cases").

// Lock does not wait for the "held" record: with the holder's writes held
// up, Lock returns and the node still carries the waiting form; the
// record lands once the writes go on.
func TestLockReturnsBeforeTheHeldRecord(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	a := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	resume := a.PauseRenewal()
	defer resume()

	require.NoError(t, a.Lock(ctx))
	assert.Equal(t, string(timeout.EncodeLease(lease, false)), string(data(t, raw, a.Node())),
		"Lock returned after the record was written")
	assert.Zero(t, a.Writes().Stamps)

	resume()
	require.Eventually(t, func() bool {
		return string(data(t, raw, a.Node())) == string(timeout.EncodeLease(lease, true))
	}, wait, 10*time.Millisecond, "the record never landed")
	assert.EqualValues(t, 1, a.Writes().Stamps)
	assert.NoError(t, a.Err())
	require.NoError(t, a.Unlock(ctx))
}

// A holder that stalls as it acquires, before its record goes out, is
// evicted, and not before one lease after its node was created: its
// lease runs from a moment before its create was sent, and the judge
// counts from a probe after it saw the holder at the head, which can only
// be later.
func TestUnstampedHolderIsEvictedOnlyAfterItsLease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	first := leaseHolder(t, ctx, path, "first")
	a := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	resume := a.PauseRenewal() // stalls before its record
	defer resume()
	aRes := lockAsync(ctx, a)
	waitChildren(t, raw, path, 2)
	judge, judged := leaseWaiter(t, ctx, raw, path, 3)

	require.NoError(t, first.Unlock(ctx))
	acquired(t, aRes, wait)
	aNode := a.Node()
	created := stat(t, raw, aNode).Ctime
	_, _, gone, err := raw.ExistsW(aNode)
	require.NoError(t, err)

	var probe *zk.Stat
	select {
	case e := <-gone:
		require.Equal(t, zk.EventNodeDeleted, e.Type)
		probe = stat(t, raw, judge.Node()) // the probe that decided, or a later write
	case <-ctx.Done():
		t.Fatal("the stalled holder was never evicted")
	}
	acquired(t, judged, wait)
	evictedAfter := time.Duration(probe.Mtime-created) * time.Millisecond
	t.Logf("lease %v: the unstamped holder's node was created at ZooKeeper time 0, evicted after a probe at %v", lease, evictedAfter)
	assert.GreaterOrEqual(t, evictedAfter, lease, "evicted before one lease after its create, by ZooKeeper's clock")
	assert.EqualValues(t, 1, judge.Evictions())

	resume()
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("the evicted holder's Done did not close once it went on")
	}
	assert.ErrorIs(t, a.Err(), zklocks.ErrLockLost)
	assert.ErrorIs(t, a.Unlock(ctx), zklocks.ErrLockLost)
	require.NoError(t, judge.Unlock(ctx))
	waitChildren(t, raw, path, 0)
}

// A holder cut off from the ensemble before its record went out gives its
// hold up (Done closes) before the judge, on the ensemble's side, holds.
func TestHolderCutOffBeforeItsRecordGivesUpFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	const session = 6 * time.Second // the session outlives the lease by far
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	first := leaseHolder(t, ctx, path, "first")
	cut := zktest.NewCutter()
	a := newMutex(t, zktest.Connect(t, zktest.WithDialer(cut.Dialer()), zktest.WithSessionTimeout(session)), path,
		timeout.WithLease(lease))
	resume := a.PauseRenewal()
	defer resume()
	aRes := lockAsync(ctx, a)
	waitChildren(t, raw, path, 2)
	judge, judged := leaseWaiter(t, ctx, raw, path, 3)

	require.NoError(t, first.Unlock(ctx))
	acquired(t, aRes, wait)
	cut.Cut()
	resume() // the record goes nowhere

	var gaveUp, judgeHeld time.Time
	select {
	case <-a.Done():
		gaveUp = time.Now()
	case <-ctx.Done():
		t.Fatal("the cut-off holder never gave its hold up")
	}
	acquired(t, judged, wait)
	judgeHeld = time.Now()
	t.Logf("gave up %v before the judge held", judgeHeld.Sub(gaveUp).Round(time.Millisecond))
	assert.True(t, gaveUp.Before(judgeHeld), "the cut-off holder must stop believing before the judge holds")
	assert.ErrorIs(t, a.Err(), zklocks.ErrLockLost)
	assert.EqualValues(t, 1, judge.Evictions())

	cut.Heal()
	assert.ErrorIs(t, a.Unlock(ctx), zklocks.ErrLockLost)
	require.NoError(t, judge.Unlock(ctx))
	waitChildren(t, raw, path, 0)
}

// data reads a node's data, synced first.
func data(t testing.TB, raw *zk.Conn, node string) []byte {
	t.Helper()
	synced(t, raw, node)
	d, _, err := raw.Get(node)
	require.NoError(t, err, "get %s", node)
	return d
}
