package timeout_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/timeout"
)

// libfaketime, from Debian's faketime package (scripts/install-peers.sh
// installs it): preloaded into a member's JVM, it shifts the wall clock
// ZooKeeper stamps mtimes with, and leaves the monotonic clock alone. Its
// directory is the architecture's (x86_64-linux-gnu, aarch64-linux-gnu).
const libfaketime = "/usr/lib/*/faketime/libfaketimeMT.so.1"

// skewedMember is the member whose clock is wrong: the one with the
// largest id, which an election among members that have the same
// transactions makes leader.
const skewedMember = 2

// A leader whose clock is wrong by more than a lease takes over while a
// holder renews and a waiter judges its lease: the judge compares the
// holder's last stamp from the old leader's clock with its probes by the
// new one's. Ahead, that made a live holder look expired at once; behind,
// an expired one look alive for the size of the skew. With the epoch
// rule (an mtime is compared only with mtimes of the same leader epoch)
// the live holder keeps its lock through a lease and a half of the new epoch,
// and, its renewals stopped, is evicted a lease after its last renewal,
// by the new leader's clock.
func TestSkewedLeader(t *testing.T) {
	libs, _ := filepath.Glob(libfaketime)
	if len(libs) == 0 {
		t.Fatalf("no %s: run scripts/install-peers.sh (make test does), or: sudo apt-get install faketime", libfaketime)
	}
	for _, tc := range []struct {
		name string
		skew time.Duration
	}{
		{"ahead", 30 * time.Second},
		{"behind", -30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) { testSkewedLeader(t, libs[0], tc.skew) })
	}
}

func testSkewedLeader(t *testing.T, lib string, skew time.Duration) {
	// The lease is long enough for the holder to renew across the
	// election that makes the skewed member leader (seconds on a loaded
	// machine): losing the lock to a leaderless spell longer than the
	// lease would be right, and not what this test is about.
	const lease, session = 10 * time.Second, 40 * time.Second
	ctx := context.Background()
	e := zktest.PrivateEnsemble(t, func(c *ensemble.Config) {
		c.MemberEnv = map[int][]string{skewedMember: {
			"LD_PRELOAD=" + lib,
			"FAKETIME=" + offset(skew),
			"DONT_FAKE_MONOTONIC=1",
		}}
	})
	on := zktest.WithServers(e.Servers())
	raw := zktest.Connect(t, on)
	old := leaderOtherThan(t, e, skewedMember)
	requireClockOff(t, raw, 0, "the first leader's clock")

	path := zktest.LockPath(t)
	mutex := func() *timeout.Mutex {
		conn := zktest.Connect(t, on, zktest.WithSessionTimeout(session))
		return newMutex(t, conn, path, timeout.WithLease(lease))
	}
	a, b := mutex(), mutex()
	require.NoError(t, a.Lock(ctx))
	bRes := lockAsync(ctx, b)
	waitChildren(t, raw, path, 2)
	time.Sleep(lease / 2) // a renews at least once under the first leader

	require.NoError(t, e.Kill(old))
	require.Eventually(t, func() bool { i, err := e.Leader(); return err == nil && i == skewedMember },
		30*time.Second, 50*time.Millisecond, "member %d, skewed by %v, becomes leader", skewedMember, skew)
	requireClockOff(t, raw, skew, "the new leader's clock")

	// A lease and a half of the new epoch: the live holder must keep its
	// lock.
	select {
	case <-a.Done():
		t.Fatalf("the live holder lost its lock after the skewed leader took over: %v", a.Err())
	case err := <-bRes:
		t.Fatalf("the waiter took the lock (%v) from a live holder", err)
	case <-time.After(3 * lease / 2):
	}
	assert.Zero(t, b.Evictions(), "evictions of the live holder")

	// Its renewals stopped, the holder is evicted one lease after its last
	// renewal, both by the new leader's clock.
	resume := a.PauseRenewal()
	t.Cleanup(resume)
	time.Sleep(100 * time.Millisecond) // let a renewal in flight land
	last := stat(t, raw, a.Node()).Mtime
	acquired(t, bRes, lease+lease/3+wait)
	late := time.Duration(stat(t, raw, b.Node()).Mtime-last)*time.Millisecond - lease
	t.Logf("skew %v: evicted %v after the lease ran out, by the new leader's clock", skew, late)
	assert.GreaterOrEqual(t, late, time.Duration(0), "the waiter took the lock before the lease ran out")
	assert.Less(t, late, lease/3+slack, "eviction came later than a lease plus a probe interval")
	assert.EqualValues(t, 1, b.Evictions())
	locktest.RequireClosedWithin(t, a.Done(), wait, "the evicted holder")
	require.ErrorIs(t, a.Unlock(ctx), zklocks.ErrLockLost)
	require.NoError(t, b.Unlock(ctx))
}

// offset is libfaketime's FAKETIME for a clock d off: "+30s", "-30s".
func offset(d time.Duration) string {
	if d < 0 {
		return "-" + (-d).String()
	}
	return "+" + d.String()
}

// leaderOtherThan returns the leader, first making sure it is not member
// i: if it is, i is stopped until another member leads, then started
// again (it rejoins as a follower).
func leaderOtherThan(t *testing.T, e *ensemble.Ensemble, i int) int {
	t.Helper()
	leader, err := e.Leader()
	require.NoError(t, err)
	if leader != i {
		return leader
	}
	require.NoError(t, e.Kill(i))
	require.Eventually(t, func() bool { l, err := e.Leader(); return err == nil && l != i },
		30*time.Second, 50*time.Millisecond, "another member leads")
	require.NoError(t, e.Restart(i))
	leader, err = e.Leader()
	require.NoError(t, err)
	require.NotEqual(t, i, leader)
	return leader
}

// requireClockOff writes a node and checks that the leader stamped it
// with a clock about d off this machine's.
func requireClockOff(t *testing.T, raw *zk.Conn, d time.Duration, what string) {
	t.Helper()
	before := time.Now()
	node, err := raw.Create("/clock-probe-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	mtime := time.UnixMilli(stat(t, raw, node).Mtime)
	off := mtime.Sub(before)
	assert.InDelta(t, d.Seconds(), off.Seconds(), 2, "%s: off by %v, want about %v", what, off, d)
	require.NoError(t, raw.Delete(node, -1))
}
