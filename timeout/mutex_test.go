package timeout_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/oplog"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
	"github.com/zklocks/zklocks/timeout"
)

// lease is the lease of the tests' holders: MinLease, long enough that a
// renewal every 333ms survives a loaded machine under -race, short enough
// to keep the tests quick.
const lease = time.Second

// slack bounds how late an eviction may come after the lease ran out by
// ZooKeeper's clock: a read, a write, a read, a delete, a notification and
// the new holder's stamp, on a busy two-core machine under -race.
const slack = 500 * time.Millisecond

// wait is how long a test waits for something that should happen soon.
const wait = 10 * time.Second

// newMutex makes a Mutex whose renewals a test can pause: with the local
// clock (timeout.WithClock) unless opts give another.
func newMutex(t testing.TB, conn *zk.Conn, path string, opts ...zklocks.Option) *timeout.Mutex {
	t.Helper()
	m, err := timeout.New(zktest.Session(t, conn), path, append([]zklocks.Option{timeout.WithClock(time.Now)}, opts...)...)
	require.NoError(t, err)
	return m
}

// lockAsync runs m.Lock in a goroutine and delivers its result.
func lockAsync(ctx context.Context, m *timeout.Mutex) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- m.Lock(ctx) }()
	return ch
}

// synced makes raw's server catch up with the leader on path first:
// ZooKeeper promises read-your-writes only within a session, and the
// tests read with a plain client what the locks wrote with theirs.
func synced(t testing.TB, raw *zk.Conn, path string) {
	t.Helper()
	_, err := raw.Sync(path)
	require.NoError(t, err, "sync %s", path)
}

// stat reads a node's stat with a plain client.
func stat(t testing.TB, raw *zk.Conn, node string) *zk.Stat {
	t.Helper()
	synced(t, raw, node)
	_, st, err := raw.Get(node)
	require.NoError(t, err, "get %s", node)
	return st
}

// children lists path's children with a plain client.
func children(t testing.TB, raw *zk.Conn, path string) []string {
	t.Helper()
	synced(t, raw, path)
	return zktest.Children(t, raw, path)
}

// waitChildren waits until path has n children and returns them.
func waitChildren(t testing.TB, raw *zk.Conn, path string, n int) []string {
	t.Helper()
	var kids []string
	require.Eventually(t, func() bool {
		kids = children(t, raw, path)
		return len(kids) == n
	}, wait, 10*time.Millisecond, "children of %s: want %d", path, n)
	return kids
}

// acquired waits for a Lock started with lockAsync to succeed.
func acquired(t testing.TB, ch <-chan error, within time.Duration) {
	t.Helper()
	select {
	case err := <-ch:
		require.NoError(t, err)
	case <-time.After(within):
		t.Fatalf("Lock did not return within %v", within)
	}
}

// stillWaiting checks that a Lock started with lockAsync has not returned.
func stillWaiting(t testing.TB, ch <-chan error, who string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s: Lock returned (%v) while the holder still renews", who, err)
	default:
	}
}

// The conformance suite, without a lease (the sequential lock plus the
// acquire bound) and with one (every hold stamped and renewed).
func TestConformance(t *testing.T) {
	for _, l := range []time.Duration{0, lease} {
		t.Run(fmt.Sprintf("lease=%v", l), func(t *testing.T) {
			var withLease []zklocks.Option
			if l > 0 {
				withLease = append(withLease, timeout.WithLease(l))
			}
			locktest.Run(t, locktest.Variant{
				Name: "timeout",
				New: func(s *zklocks.Session, path string, opts ...zklocks.Option) (zklocks.Locker, error) {
					return timeout.New(s, path, append(opts, withLease...)...)
				},
				FIFO:   true,
				Layout: locktest.ChildrenOfPath,
			})
		})
	}
}

func TestNewChecksArguments(t *testing.T) {
	s := zktest.Connected(t) // New sends no request on it
	for _, d := range []time.Duration{-time.Second, time.Millisecond, timeout.MinLease - time.Millisecond, time.Second + time.Microsecond} {
		_, err := timeout.New(s, "/locks/x", timeout.WithLease(d))
		assert.ErrorIs(t, err, timeout.ErrBadLease, "lease %v", d)
	}
	m, err := timeout.New(s, "/locks/x", timeout.WithLease(timeout.MinLease))
	require.NoError(t, err)
	assert.Equal(t, timeout.MinLease, m.Lease())
	_, err = timeout.New(s, "locks/x")
	assert.ErrorIs(t, err, zklocks.ErrBadPath)
	_, err = timeout.New(nil, "/locks/x")
	assert.ErrorIs(t, err, zklocks.ErrNilSession)
}

func TestLeaseRecord(t *testing.T) {
	assert.Nil(t, timeout.EncodeLease(0, false))
	assert.Equal(t, "lease=1500ms", string(timeout.EncodeLease(1500*time.Millisecond, false)))
	assert.Equal(t, "lease=1500ms held", string(timeout.EncodeLease(1500*time.Millisecond, true)))
	for _, tc := range []struct {
		data  string
		lease time.Duration
		held  bool
	}{
		{"lease=900ms", 900 * time.Millisecond, false},
		{"lease=900ms held", 900 * time.Millisecond, true},
		{"  lease=1ms  held\n", time.Millisecond, true},
	} {
		d, held, ok := timeout.ParseLease([]byte(tc.data))
		assert.True(t, ok, "%q", tc.data)
		assert.Equal(t, tc.lease, d, "%q", tc.data)
		assert.Equal(t, tc.held, held, "%q", tc.data)
	}
	for _, bad := range []string{"", "held", "lease=", "lease=ms", "lease=0ms", "lease=-5ms", "lease=5s",
		"lease=5", "lease=5ms taken", "lease=5ms held x", "Lease=5ms", "lease=99999999999999999ms",
		`{"owner":"x"}`, "192.168.1.7"} {
		_, _, ok := timeout.ParseLease([]byte(bad))
		assert.False(t, ok, "%q", bad)
	}
}

func FuzzParseLease(f *testing.F) {
	f.Add([]byte("lease=900ms held"))
	f.Add([]byte("lease=1ms"))
	f.Add([]byte("x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, held, ok := timeout.ParseLease(data)
		if !ok {
			return
		}
		if d <= 0 || d%time.Millisecond != 0 {
			t.Fatalf("%q: lease %v", data, d)
		}
		// What parses re-encodes to the same meaning.
		d2, held2, ok2 := timeout.ParseLease(timeout.EncodeLease(d, held))
		if !ok2 || d2 != d || held2 != held {
			t.Fatalf("%q: round trip gives %v %v %v", data, d2, held2, ok2)
		}
	})
}

// A waiter that gives up, by LockTimeout's bound or by ctx, leaves no node.
func TestTimeoutWhileQueuedLeavesNoNode(t *testing.T) {
	ctx := context.Background()
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	holder := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	require.NoError(t, holder.Lock(ctx))
	holderNode := holder.Node()

	w := newMutex(t, zktest.Connect(t), path)

	const bound = 300 * time.Millisecond
	start := time.Now()
	err := w.LockTimeout(ctx, bound)
	took := time.Since(start)
	require.ErrorIs(t, err, timeout.ErrWaitTimeout)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.GreaterOrEqual(t, took, bound)
	assert.Less(t, took, bound+slack)
	assert.Equal(t, []string{holderNode[len(path)+1:]}, children(t, raw, path), "the waiter's node is gone when LockTimeout returns")

	// The caller's own deadline is reported as the caller's, not as the bound.
	dctx, cancel := context.WithTimeout(ctx, bound)
	err = w.LockTimeout(dctx, time.Hour)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, timeout.ErrWaitTimeout)
	assert.Len(t, children(t, raw, path), 1)

	// A zero bound does not wait: TryLock.
	assert.ErrorIs(t, w.LockTimeout(ctx, 0), zklocks.ErrLocked)
	assert.Len(t, children(t, raw, path), 1)

	// The Mutex is usable again, and the bound does not cut a hold short.
	require.NoError(t, holder.Unlock(ctx))
	require.NoError(t, w.LockTimeout(ctx, wait))
	time.Sleep(2 * bound)
	assert.False(t, locktest.IsClosed(w.Done()))
	require.NoError(t, w.Unlock(ctx))
	assert.Empty(t, children(t, raw, path))
}

// The bound passes while the waiter's connection is down: LockTimeout
// returns on time anyway, and the node is deleted as soon as the
// connection is back, by the clean-up, while the session lives on.
//
// The cut comes after the waiter has joined the queue and had its first
// look at the head. A cut while the sequential lock is still joining is
// that package's case (its search for the node by GUID then goes on in
// the background: sequential's TestCutOffWhileJoining).
func TestTimeoutWhileCutOffDeletesNodeAfterHeal(t *testing.T) {
	ctx := context.Background()
	const session = 6 * time.Second
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	holder := newMutex(t, zktest.Connect(t), path)
	require.NoError(t, holder.Lock(ctx))
	t.Cleanup(func() { _ = holder.Unlock(ctx) })

	cut := zktest.NewCutter()
	wconn := zktest.Connect(t, zktest.WithDialer(cut.Dialer()), zktest.WithSessionTimeout(session))
	sid := wconn.SessionID()
	w, err := timeout.New(zktest.Session(t, wconn), path)
	require.NoError(t, err)

	const bound = time.Second
	res := make(chan error, 1)
	start := time.Now()
	go func() { res <- w.LockTimeout(ctx, bound) }()
	kids := waitChildren(t, raw, path, 2)
	time.Sleep(200 * time.Millisecond) // the waiter has listed the queue and checked the head
	cut.Cut()
	select {
	case err := <-res:
		took := time.Since(start)
		assert.ErrorIs(t, err, timeout.ErrWaitTimeout)
		assert.Less(t, took, bound+slack, "LockTimeout must not wait for the connection")
	case <-time.After(bound + wait):
		t.Fatal("LockTimeout did not return while cut off")
	}
	assert.Equal(t, kids, children(t, raw, path), "no one can delete the node while the client is cut off")

	cut.Heal()
	healed := time.Now()
	waitChildren(t, raw, path, 1)
	t.Logf("waiter's node deleted %v after the connection came back", time.Since(healed).Round(time.Millisecond))
	assert.Less(t, time.Since(healed), session/2, "deleted by the clean-up, not by the session's expiry")
	assert.Equal(t, sid, wconn.SessionID(), "the session survived: the clean-up deleted the node")
}

// A holder that renews is never evicted, however long it holds: waiters
// keep waiting, and they check with reads only (their nodes stay unwritten).
func TestRenewalKeepsSlowHolder(t *testing.T) {
	ctx := context.Background()
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	a := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	require.NoError(t, a.Lock(ctx))
	tok, node := a.Token(), a.Node()
	v0 := stat(t, raw, node).Version

	b := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	c := newMutex(t, zktest.Connect(t), path) // no lease of its own: still a judge of others'
	bRes := lockAsync(ctx, b)
	waitChildren(t, raw, path, 2) // b queues before c
	cRes := lockAsync(ctx, c)
	kids := waitChildren(t, raw, path, 3)

	time.Sleep(3 * lease)

	assert.False(t, locktest.IsClosed(a.Done()), "holder lost the lock")
	assert.NoError(t, a.Err())
	assert.Equal(t, tok, a.Token())
	stillWaiting(t, bRes, "b")
	stillWaiting(t, cRes, "c")
	assert.Zero(t, b.Evictions()+c.Evictions())
	renewals := stat(t, raw, node).Version - v0
	assert.GreaterOrEqual(t, renewals, int32(3), "about 9 renewals in 3 leases")
	for _, k := range kids {
		if path+"/"+k != node {
			assert.Zero(t, stat(t, raw, path+"/"+k).Version, "waiter %s wrote its node while the holder renewed", k)
		}
	}
	t.Logf("held %v with a %v lease: %d renewals; waiters wrote nothing; watch events: b (next in line) %d, c %d",
		3*lease, lease, renewals, b.Stats().Notifications, c.Stats().Notifications)

	require.NoError(t, a.Unlock(ctx))
	acquired(t, bRes, wait)
	assert.Greater(t, b.Token(), tok)
	require.NoError(t, b.Unlock(ctx))
	acquired(t, cRes, wait)
	require.NoError(t, c.Unlock(ctx))
}

// evictionRun pauses a holder's renewals and measures, in ZooKeeper's
// clock, how long after its lease ran out the next holder had the lock.
type evictionRun struct {
	holderMtime int64         // the evicted holder's last renewal
	nextStamp   int64         // the next holder's stamp
	late        time.Duration // nextStamp - (holderMtime + lease)
}

// pauseAndMeasure pauses a's renewals, waits for next (already waiting
// with Lock) to acquire, and checks the eviction by ZooKeeper's clock.
func pauseAndMeasure(t *testing.T, raw *zk.Conn, a, next *timeout.Mutex, nextRes <-chan error) evictionRun {
	t.Helper()
	node := a.Node()
	resume := a.PauseRenewal()
	t.Cleanup(resume)
	time.Sleep(100 * time.Millisecond) // let a renewal in flight land
	last := stat(t, raw, node).Mtime
	acquired(t, nextRes, lease+wait)
	nextStamp := stat(t, raw, next.Node()).Mtime
	run := evictionRun{holderMtime: last, nextStamp: nextStamp,
		late: time.Duration(nextStamp-last)*time.Millisecond - lease}
	assert.GreaterOrEqual(t, run.late, time.Duration(0), "the next holder stamped before the old lease ran out by ZooKeeper's clock")
	assert.Less(t, run.late, slack, "eviction came late")
	return run
}

// A holder whose renewals stop is evicted after its lease although its
// session is alive; the next holder's token is larger, and the evicted
// holder's Done closes with ErrEvicted. The operation logs say so: the
// evicting contender logs evict, the evicted holder lost.
func TestStoppedRenewalIsEvicted(t *testing.T) {
	ctx := context.Background()
	const session = 6 * time.Second // the session outlives the lease by far
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	aconn := zktest.Connect(t, zktest.WithSessionTimeout(session))
	sid := aconn.SessionID()
	aLog, bLog := locktest.NewLogRecorder(), locktest.NewLogRecorder()
	a, err := timeout.New(zktest.Session(t, aconn), path, timeout.WithLease(lease), zklocks.WithLogger(aLog.Logger()), timeout.WithClock(time.Now))
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))
	aTok, aNode := a.Token(), a.Node()

	b := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease), zklocks.WithLogger(bLog.Logger()))
	bRes := lockAsync(ctx, b)
	waitChildren(t, raw, path, 2)
	time.Sleep(lease) // b has had its first look at a, a renewed meanwhile

	run := pauseAndMeasure(t, raw, a, b, bRes)
	t.Logf("eviction latency by ZooKeeper's clock: %v after the lease ran out", run.late)

	assert.Greater(t, b.Token(), aTok, "the new holder's token is larger")
	assert.EqualValues(t, 1, b.Evictions())
	select {
	case <-a.Done():
	case <-time.After(wait):
		t.Fatal("the evicted holder's Done did not close")
	}
	assert.ErrorIs(t, a.Err(), timeout.ErrEvicted)
	assert.ErrorIs(t, a.Err(), zklocks.ErrLockLost)
	assert.Equal(t, aTok, a.Token(), "the evicted holder keeps its (stale) token until Unlock")
	assert.Less(t, a.Token(), b.Token(), "a fenced resource rejects the evicted holder")
	assert.Equal(t, sid, aconn.SessionID(), "the evicted holder's session is alive: lease expiry, not session expiry")
	assert.Equal(t, zk.StateHasSession, aconn.State())

	err = a.Unlock(ctx)
	assert.ErrorIs(t, err, zklocks.ErrLockLost)
	assert.ErrorIs(t, err, timeout.ErrEvicted)
	assert.ErrorIs(t, a.Unlock(ctx), zklocks.ErrNotLocked)

	bNode := b.Node()
	assert.False(t, locktest.IsClosed(b.Done()))
	require.NoError(t, b.Unlock(ctx))
	assert.Empty(t, children(t, raw, path))

	evict := awaitLog(t, bLog, oplog.MsgEvict)
	assert.Equal(t, bNode, evict.Str(oplog.KeyNode), "evict: the evicting contender's node")
	assert.Equal(t, aNode, evict.Str(oplog.KeyVictim))
	assert.Equal(t, aTok, evict.Int(oplog.KeyVictimToken))
	assert.Equal(t, lease, evict.Attrs[oplog.KeyLease].Duration())
	assert.GreaterOrEqual(t, evict.Attrs[oplog.KeyOverdue].Duration(), time.Duration(0))
	lost := awaitLog(t, aLog, oplog.MsgLost)
	assert.Equal(t, oplog.ReasonEvicted, lost.Str(oplog.KeyReason))
	assert.Equal(t, aTok, lost.Int(oplog.KeyToken))
	assert.Equal(t, []string{oplog.MsgAcquire, oplog.MsgLost}, aLog.Msgs(), "the evicted holder's log")
	bMsgs := slices.DeleteFunc(bLog.Msgs(), func(m string) bool { return m == oplog.MsgWait })
	assert.Equal(t, []string{oplog.MsgEvict, oplog.MsgAcquire, oplog.MsgRelease}, bMsgs, "the evicting contender's log, without its waits")
}

// awaitLog waits for the first record with message msg.
func awaitLog(t *testing.T, r *locktest.LogRecorder, msg string) locktest.LogRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	rec, err := r.Await(ctx, msg, 1)
	require.NoError(t, err)
	return rec
}

// Eviction latency, by ZooKeeper's clock: from the moment the stalled
// holder's lease ran out (its last renewal's mtime + lease) to the next
// holder's stamp (the mtime of its first write as holder). Logged for the
// docs; each round must be within [0, slack).
func TestEvictionLatency(t *testing.T) {
	ctx := context.Background()
	const rounds = 6
	var lates []time.Duration
	for range rounds {
		raw := zktest.Connect(t)
		path := zktest.LockPath(t)
		a := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
		require.NoError(t, a.Lock(ctx))
		b := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
		bRes := lockAsync(ctx, b)
		waitChildren(t, raw, path, 2)
		time.Sleep(lease / 2)
		run := pauseAndMeasure(t, raw, a, b, bRes)
		lates = append(lates, run.late)
		require.NoError(t, b.Unlock(ctx))
		assert.ErrorIs(t, a.Unlock(ctx), timeout.ErrEvicted)
	}
	slices.Sort(lates)
	t.Logf("lease %v, %d rounds: eviction latency min %v, median %v, max %v (all: %v)",
		lease, rounds, lates[0], lates[len(lates)/2], lates[len(lates)-1], lates)
}

// Three waiters see the holder's lease run out at the same moment and race
// to evict it: the versioned delete lets exactly one of them win.
func TestEvictionRaceHasOneWinner(t *testing.T) {
	ctx := context.Background()
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	a := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	require.NoError(t, a.Lock(ctx))

	logs := locktest.NewLogRecorder() // the three waiters' operation log
	ws := []*timeout.Mutex{
		newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease), zklocks.WithLogger(logs.Logger())),
		newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease), zklocks.WithLogger(logs.Logger())),
		newMutex(t, zktest.Connect(t), path, zklocks.WithLogger(logs.Logger())), // no lease of its own
	}
	var res []<-chan error
	for i, w := range ws {
		res = append(res, lockAsync(ctx, w))
		waitChildren(t, raw, path, i+2) // queue in this order
	}
	time.Sleep(lease)

	pauseAndMeasure(t, raw, a, ws[0], res[0])
	var won, tried int64
	for _, w := range ws {
		won += w.Evictions()
		tried += w.EvictionAttempts()
	}
	t.Logf("eviction deletes sent %d, succeeded %d", tried, won)
	assert.EqualValues(t, 1, won, "exactly one eviction")

	// The new holder renews: nobody evicts it.
	time.Sleep(2 * lease)
	stillWaiting(t, res[1], "second waiter")
	stillWaiting(t, res[2], "third waiter")
	won = 0
	for _, w := range ws {
		won += w.Evictions()
	}
	assert.EqualValues(t, 1, won, "the new holder renews and must not be evicted")
	assert.True(t, locktest.IsClosed(a.Done()))
	evicts := slices.DeleteFunc(logs.Msgs(), func(m string) bool { return m != oplog.MsgEvict })
	assert.Len(t, evicts, 1, "evict events in the waiters' log")

	for i, w := range ws {
		if i > 0 {
			acquired(t, res[i], wait)
		}
		require.NoError(t, w.Unlock(ctx))
	}
}

// skewed is a local clock off by d, without a monotonic reading, so that
// every use of it sees the offset.
func skewed(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Round(0).Add(d) }
}

// A local clock minutes off changes nothing: the holder renews and is not
// evicted, and once its renewals stop it is evicted when its lease runs out
// by ZooKeeper's clock, not before and not much later.
func TestSkewedLocalClockChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name           string
		holder, waiter time.Duration
	}{
		{"holder_ahead", 7 * time.Minute, 0},
		{"holder_behind", -7 * time.Minute, 0},
		{"waiter_ahead", 0, 5 * time.Minute},
		{"waiter_behind", 0, -5 * time.Minute},
		{"both_opposite", -3 * time.Minute, 11 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			raw := zktest.Connect(t)
			path := zktest.LockPath(t)
			a := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease), timeout.WithClock(skewed(tc.holder)))
			require.NoError(t, a.Lock(ctx))
			b := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease), timeout.WithClock(skewed(tc.waiter)))
			bRes := lockAsync(ctx, b)
			waitChildren(t, raw, path, 2)

			time.Sleep(2 * lease)
			stillWaiting(t, bRes, "waiter")
			assert.False(t, locktest.IsClosed(a.Done()))

			run := pauseAndMeasure(t, raw, a, b, bRes)
			t.Logf("holder clock %+v, waiter clock %+v: evicted %v after the lease ran out", tc.holder, tc.waiter, run.late)
			assert.EqualValues(t, 1, b.Evictions())
			require.NoError(t, b.Unlock(ctx))
			assert.ErrorIs(t, a.Unlock(ctx), zklocks.ErrLockLost)
		})
	}
}

// A holder cut off from the ensemble cannot renew: it gives the hold up
// (Done closes, ErrLeaseExpired) before a waiter can evict it, long
// before its session would expire, and its session survives the cut.
func TestCutOffHolderGivesUpBeforeEviction(t *testing.T) {
	ctx := context.Background()
	const session = 6 * time.Second
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	cut := zktest.NewCutter()
	aconn := zktest.Connect(t, zktest.WithDialer(cut.Dialer()), zktest.WithSessionTimeout(session))
	sid := aconn.SessionID()
	a, err := timeout.New(zktest.Session(t, aconn), path, timeout.WithLease(lease))
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))
	aTok := a.Token()

	b := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	bRes := lockAsync(ctx, b)
	waitChildren(t, raw, path, 2)

	cut.Cut()
	cutAt := time.Now()
	var gaveUp time.Time
	select {
	case <-a.Done():
		gaveUp = time.Now()
	case <-time.After(session):
		t.Fatal("the cut-off holder's Done did not close within the session timeout")
	}
	acquired(t, bRes, wait)
	gotIt := time.Now()
	t.Logf("cut at 0; holder gave up at %v; next holder had the lock at %v",
		gaveUp.Sub(cutAt).Round(time.Millisecond), gotIt.Sub(cutAt).Round(time.Millisecond))
	assert.True(t, gaveUp.Before(gotIt), "the old holder must stop believing before the next one holds")
	assert.Less(t, gaveUp.Sub(cutAt), lease, "gave up within the lease")
	assert.ErrorIs(t, a.Err(), timeout.ErrLeaseExpired)
	assert.ErrorIs(t, a.Err(), zklocks.ErrLockLost)
	assert.Greater(t, b.Token(), aTok)

	cut.Heal()
	require.Eventually(t, func() bool { return aconn.State() == zk.StateHasSession }, wait, 10*time.Millisecond)
	assert.Equal(t, sid, aconn.SessionID(), "lease expiry is not session expiry")
	assert.ErrorIs(t, a.Unlock(ctx), zklocks.ErrLockLost)
	require.NoError(t, b.Unlock(ctx))
	waitChildren(t, raw, path, 0)
}

// A holder that declares no lease (a sequential lock, or a timeout lock
// without WithLease) is never evicted.
func TestNoLeaseHolderIsNotEvicted(t *testing.T) {
	ctx := context.Background()
	path := zktest.LockPath(t)
	seq, err := sequential.New(zktest.Connected(t), path)
	require.NoError(t, err)
	require.NoError(t, seq.Lock(ctx))
	w := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	assert.ErrorIs(t, w.LockTimeout(ctx, 3*lease), timeout.ErrWaitTimeout)
	assert.Zero(t, w.Evictions())
	assert.False(t, locktest.IsClosed(seq.Done()))
	require.NoError(t, seq.Unlock(ctx))

	plain := newMutex(t, zktest.Connect(t), path)
	require.NoError(t, plain.Lock(ctx))
	assert.ErrorIs(t, w.LockTimeout(ctx, 3*lease), timeout.ErrWaitTimeout)
	assert.Zero(t, w.Evictions())
	require.NoError(t, plain.Unlock(ctx))
}

// leaderProposals reads the leader's proposal count: the quorum writes
// the ensemble has made.
func leaderProposals(t *testing.T, e *ensemble.Ensemble) int64 {
	t.Helper()
	i, err := e.Leader()
	require.NoError(t, err)
	m, err := e.Mntr(i)
	require.NoError(t, err)
	n, err := m.Int("zk_proposal_count")
	require.NoError(t, err)
	return n
}

// The lease's price in quorum writes, counted by the leader and accounted
// for exactly. Every Lock call of these rows writes two nodes' worth in
// the sequential lock (its create, and the delete by Unlock or by the
// failed Lock's clean-up, a failed write being an error transaction that
// is proposed and logged too), and the lease logic counts every write it
// sends (stamps, renewals, waiters' probes, evictions, give-up deletes):
// the leader must have made exactly that many proposals. What varies from
// run to run (renewals while a hold is slow under load, probes by waiters
// that see a holder before its stamp) is counted, not tolerated.
//
// The test runs on an ensemble of its own. On the shared one, a row once
// found 10 to 18 proposals too many, three tries in a row, most likely the
// server's once-a-minute removal of the empty lock paths (containers) of
// earlier tests: the package's tests reach that minute about when this
// one runs. Writes that are none of ours can still only add (a
// session closing late), so a row that finds more proposals than it
// accounts for is run again, up to three times; one that finds fewer fails
// at once. The lock path itself gets a child that is no contender, so the
// server never removes it between holds. It skips with ZK_SERVERS.
//
//	go test -race -count=1 -v -run TestLeaseWriteCost ./timeout/
func TestLeaseWriteCost(t *testing.T) {
	ctx := context.Background()
	e := zktest.PrivateEnsemble(t)
	on := zktest.WithServers(e.Servers())
	raw := zktest.Connect(t, on)
	type result struct {
		proposals, accounted int64
		locks, holds, lost   int
		lease                timeout.LeaseWrites
		requests             int64
	}
	measure := func(opts []zklocks.Option, hold time.Duration, contenders, n int, mayLose bool) result {
		path := zktest.LockPath(t)
		ms := make([]*timeout.Mutex, contenders)
		for i := range ms {
			ms[i] = newMutex(t, zktest.Connect(t, on), path, opts...)
		}
		require.NoError(t, ms[0].Lock(ctx)) // parents exist from here on
		pin, err := raw.Create(path+"/pin", nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		require.NoError(t, ms[0].Unlock(ctx))
		defer func() { require.NoError(t, raw.Delete(pin, -1)) }()

		total := func() (w timeout.LeaseWrites, req int64) {
			for _, m := range ms {
				w, req = w.Add(m.Writes()), req+m.Stats().Requests
			}
			return w, req
		}
		wBefore, reqBefore := total()
		before := leaderProposals(t, e)
		type tally struct{ locks, holds, lost int }
		tallies := make(chan tally, contenders)
		errs := make(chan error, contenders)
		for _, m := range ms {
			go func() {
				var c tally
				for range n {
					c.locks++
					err := m.Lock(ctx)
					if err == nil {
						c.holds++
						time.Sleep(hold)
						err = m.Unlock(ctx)
					}
					switch {
					case err == nil:
					case mayLose && errors.Is(err, zklocks.ErrLockLost):
						c.lost++ // a lease given up or evicted under load: its writes are counted all the same
					default:
						errs <- err
						return
					}
				}
				tallies <- c
				errs <- nil
			}()
		}
		for range ms {
			require.NoError(t, <-errs)
		}
		after := leaderProposals(t, e)
		var r result
		for range ms {
			c := <-tallies
			r.locks, r.holds, r.lost = r.locks+c.locks, r.holds+c.holds, r.lost+c.lost
		}
		wAfter, reqAfter := total()
		r.lease, r.requests = wAfter.Sub(wBefore), reqAfter-reqBefore
		r.proposals = after - before
		r.accounted = 2*int64(r.locks) + r.lease.Total()
		return r
	}
	long := []zklocks.Option{timeout.WithLease(3 * time.Second)}
	short := []zklocks.Option{timeout.WithLease(lease)} // a renewal every 300ms
	rows := []struct {
		name       string
		opts       []zklocks.Option
		hold       time.Duration
		contenders int
		n          int  // Lock calls per contender
		mayLose    bool // the lease may run out under load
	}{
		{"no lease, alone", nil, 0, 1, 20, false},
		{"lease, alone", long, 0, 1, 20, false},
		{"no lease, 4 contenders", nil, 0, 4, 10, false},
		{"lease, 4 contenders", long, 0, 4, 10, false},
		{"lease, 4 contenders, 100ms holds", long, 100 * time.Millisecond, 4, 5, false},
		{"lease 1s, 4 contenders, 1050ms holds", short, 1050 * time.Millisecond, 4, 2, true},
	}
	var report []string
	for _, row := range rows {
		var r result
		for try := 1; ; try++ {
			r = measure(row.opts, row.hold, row.contenders, row.n, row.mayLose)
			require.GreaterOrEqual(t, r.proposals, r.accounted,
				"%s: the leader made fewer proposals than the locks sent writes (%+v)", row.name, r)
			if r.proposals == r.accounted {
				break
			}
			t.Logf("%s, try %d: %d proposals, %d of them ours; someone else wrote meanwhile: again", row.name, try, r.proposals, r.accounted)
			if try == 3 {
				t.Errorf("%s: %d proposals, only %d accounted for, three times (%+v)", row.name, r.proposals, r.accounted, r)
				break
			}
		}
		perHold := func(v int64) float64 { return float64(v) / float64(r.holds) }
		report = append(report, fmt.Sprintf("%-40s %5.2f quorum writes/acquisition (%d = 2 x %d Lock calls + stamps %d, renewals %d, probes %d, evictions %d, give-ups %d; %d lost), %5.2f client requests",
			row.name, perHold(r.proposals), r.proposals, r.locks, r.lease.Stamps, r.lease.Renewals, r.lease.Probes,
			r.lease.Evictions, r.lease.Drops, r.lost, perHold(r.requests)))
		switch {
		case row.opts == nil:
			assert.Zero(t, r.lease.Total(), "%s: a Mutex without a lease wrote for its lease", row.name)
		case !row.mayLose && row.hold == 0:
			// A hold released before its "held" record went out never sends it.
			assert.LessOrEqual(t, r.lease.Stamps, int64(r.holds), "%s: at most one stamp per hold", row.name)
		case !row.mayLose:
			assert.EqualValues(t, r.holds, r.lease.Stamps, "%s: one stamp per hold that outlasts its record's send", row.name)
		}
	}
	t.Log("\n" + strings.Join(report, "\n"))
}

// Unlock after a lease loss honours its ctx: on a silent link (nothing
// answered, nothing closed) it returns when ctx ends, and the node goes
// in the background once the link is back, not a good part of a session
// timeout later.
func TestUnlockAfterLeaseLossHonoursCtxOnASilentLink(t *testing.T) {
	ctx, stop := context.WithTimeout(t.Context(), 60*time.Second)
	defer stop()
	const session = 6 * time.Second
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	cut := zktest.NewCutter()
	aconn := zktest.Connect(t, zktest.WithDialer(cut.Dialer()), zktest.WithSessionTimeout(session))
	a, err := timeout.New(zktest.Session(t, aconn), path, timeout.WithLease(lease))
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))

	cut.Silence()
	select {
	case <-a.Done():
	case <-time.After(session):
		t.Fatal("the silenced holder's Done did not close within the session timeout")
	}
	require.ErrorIs(t, a.Err(), timeout.ErrLeaseExpired)
	const bound = 200 * time.Millisecond
	uctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	start := time.Now()
	err = a.Unlock(uctx)
	took := time.Since(start)
	assert.ErrorIs(t, err, zklocks.ErrLockLost)
	assert.Less(t, took, bound+500*time.Millisecond, "Unlock with a %v ctx after a lease loss on a silent link took %v", bound, took)

	cut.Heal()
	waitChildren(t, raw, path, 0)
}
