package rwlock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/rwlock"
)

// A holder of the write lock that takes the read lock and then releases
// the write lock keeps readers-only company: no writer gets in between.
func TestDowngradeKeepsWritersOut(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	a, b, c := newMutex(t, path), newMutex(t, path), newMutex(t, path)
	require.NoError(t, a.Lock(ctx))
	require.NoError(t, a.RLock(ctx), "RLock while holding the write lock")
	assert.Greater(t, a.Reader().Token(), a.Writer().Token(), "the read hold's node came after the write hold's")

	bres := async(ctx, b.Lock)
	waitWatching(t, b, b.Writer(), 0)
	require.NoError(t, a.Unlock(ctx), "release the write lock, keep the read lock")
	assert.Zero(t, a.Writer().Token())
	assert.NotZero(t, a.Reader().Token(), "still reading")

	// This is what CURATOR-621 got wrong: the waiting writer must not hold
	// while the downgraded reader does.
	require.ErrorIs(t, c.TryLock(ctx), zklocks.ErrLocked, "TryLock beside the downgraded reader")
	requireWaiting(t, bres, "the writer queued behind the downgraded reader")
	require.NoError(t, a.RUnlock(ctx))
	requireAcquired(t, bres, "the writer, once the downgraded reader left")
}

// A writer already waiting behind ours would hold beside our reader as
// soon as we released the write lock, and our RLock can not wait for it
// (it waits for us): the downgrade is refused at once, and leaves nothing.
func TestDowngradeRefusedWhileAnotherWriterWaits(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	conn := zktest.Connect(t)
	a, err := rwlock.New(zktest.Session(t, conn), path)
	require.NoError(t, err)
	b := newMutex(t, path)
	require.NoError(t, a.Lock(ctx))
	bres := async(ctx, b.Lock)
	waitWatching(t, b, b.Writer(), 0)

	err = a.RLock(ctx)
	require.ErrorIs(t, err, rwlock.ErrDowngrade)
	require.ErrorIs(t, err, zklocks.ErrLocked)
	assert.Equal(t, []string{a.Writer().Node()}, ownNodes(t, conn, path), "a's nodes after the refused downgrade")
	assert.Zero(t, a.Reader().Token())

	require.NoError(t, a.Unlock(ctx))
	requireAcquired(t, bres, "the waiting writer")
}

// A reader can not become a writer without letting go: its writer would
// wait behind its own reader for ever.
func TestUpgradeRefused(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	conn := zktest.Connect(t)
	a, err := rwlock.New(zktest.Session(t, conn), path)
	require.NoError(t, err)
	require.NoError(t, a.RLock(ctx))

	for name, acquire := range map[string]func() error{
		"Lock":    func() error { return a.Lock(ctx) },
		"TryLock": func() error { return a.TryLock(ctx) },
	} {
		err := acquire()
		require.ErrorIs(t, err, rwlock.ErrUpgrade, name)
		assert.EqualError(t, err, "rwlock: "+map[string]string{"Lock": "lock", "TryLock": "trylock"}[name]+" "+path+": "+rwlock.ErrUpgrade.Error())
	}
	assert.Equal(t, []string{a.Reader().Node()}, ownNodes(t, conn, path), "a's nodes: its reader's only")

	require.NoError(t, a.RUnlock(ctx))
	require.NoError(t, a.Lock(ctx), "Lock once the read lock is released")
	require.NoError(t, a.Unlock(ctx))
}

// The two sides of one Mutex keep their own state: a second RLock is
// ErrAlreadyLocked, RUnlock without a read hold ErrNotLocked, even while
// the write side holds.
func TestSidesKeepTheirOwnState(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	a := newMutex(t, zktest.LockPath(t))
	require.ErrorIs(t, a.RUnlock(ctx), zklocks.ErrNotLocked)
	require.NoError(t, a.RLock(ctx))
	require.ErrorIs(t, a.RLock(ctx), zklocks.ErrAlreadyLocked)
	require.ErrorIs(t, a.TryRLock(ctx), zklocks.ErrAlreadyLocked)
	require.ErrorIs(t, a.Unlock(ctx), zklocks.ErrNotLocked, "Unlock of the write side while only reading")
	require.NoError(t, a.RUnlock(ctx))
	require.ErrorIs(t, a.RUnlock(ctx), zklocks.ErrNotLocked, "second RUnlock")
}

// A write hold lost without Unlock (its session expired) can not be
// downgraded: a writer may have held since. RLock says so and leaves
// nothing; after Unlock reports the loss, a plain RLock works.
func TestDowngradeRefusedAfterTheWriteHoldWasLost(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	conn := zktest.Connect(t, zktest.WithSessionTimeout(locktest.ExpirySessionTimeout))
	a, err := rwlock.New(zktest.Session(t, conn), path)
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))
	zktest.ExpireSession(t, conn)
	locktest.RequireClosedWithin(t, a.Writer().Done(), 5*time.Second, "the write hold, its session gone")

	err = a.RLock(ctx)
	require.ErrorIs(t, err, rwlock.ErrDowngrade)
	require.ErrorIs(t, err, zklocks.ErrLockLost)
	assert.Empty(t, ownNodes(t, conn, path), "nodes after the refused downgrade")
	require.ErrorIs(t, a.Unlock(ctx), zklocks.ErrLockLost)
	require.NoError(t, a.RLock(ctx), "a plain RLock once the lost hold is released")
	require.NoError(t, a.RUnlock(ctx))
}

// RLock while this Mutex's own Lock is still waiting is refused: the read
// node could come first, and the writer would wait for its own reader.
func TestRLockWhileLockWaitsIsRefused(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	holder, a := newMutex(t, path), newMutex(t, path)
	require.NoError(t, holder.Lock(ctx))
	res := async(ctx, a.Lock)
	waitWatching(t, a, a.Writer(), 0)
	require.ErrorIs(t, a.RLock(ctx), zklocks.ErrAlreadyLocked)
	require.NoError(t, holder.Unlock(ctx))
	requireAcquired(t, res, "the writer")
	require.NoError(t, a.Unlock(ctx))
}
