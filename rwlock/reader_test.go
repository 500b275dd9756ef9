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

// The reader suite: what the conformance suite can not ask of a lock
// whose holders may share it.

func TestReadersShare(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	var tokens []int64
	var readers []*rwlock.Mutex
	for i := range 4 {
		m := newMutex(t, path)
		require.NoError(t, m.RLock(ctx), "reader %d", i)
		readers = append(readers, m)
		tokens = append(tokens, m.Reader().Token())
	}
	for i, m := range readers {
		assert.False(t, locktest.IsClosed(m.Reader().Done()), "reader %d: Done closed while it holds", i)
		assert.Zero(t, m.Writer().Token(), "reader %d: no write hold", i)
	}
	assert.IsIncreasing(t, tokens, "tokens grow in queue order")
	for _, m := range readers {
		require.NoError(t, m.RUnlock(ctx))
	}
	require.Empty(t, zktest.Children(t, zktest.Connect(t), path), "every reader's node is gone")
}

func TestReaderWaitsForTheWriterAhead(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	w, r, other := newMutex(t, path), newMutex(t, path), newMutex(t, path)
	require.NoError(t, w.Lock(ctx))

	res := async(ctx, r.RLock)
	waitWatching(t, r, r.Reader(), 0)
	requireWaiting(t, res, "RLock behind a writer")
	require.ErrorIs(t, other.TryRLock(ctx), zklocks.ErrLocked, "TryRLock while a writer holds")

	require.NoError(t, w.Unlock(ctx))
	requireAcquired(t, res, "RLock after the writer's Unlock")
	require.NoError(t, other.TryRLock(ctx), "TryRLock beside a reader")
}

func TestWriterWaitsForEveryReaderAhead(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	r1, r2, w := newMutex(t, path), newMutex(t, path), newMutex(t, path)
	require.NoError(t, r1.RLock(ctx))
	require.NoError(t, r2.RLock(ctx))
	require.ErrorIs(t, newMutex(t, path).TryLock(ctx), zklocks.ErrLocked, "TryLock while readers hold")

	res := async(ctx, w.Lock)
	waitWatching(t, w, w.Writer(), 0)
	base := w.Stats().Notifications

	// The writer watches r2, its predecessor, only: r1's release must not
	// wake it, and r2's must (then it lists, and finds nobody ahead).
	require.NoError(t, r1.RUnlock(ctx))
	requireWaiting(t, res, "Lock while r2 still reads")
	require.NoError(t, r2.RUnlock(ctx))
	requireAcquired(t, res, "Lock after the last reader's RUnlock")
	assert.Equal(t, int64(1), w.Stats().Notifications-base, "watch events that reached the writer")
}

// FIFO between readers and writers: a reader that comes after a waiting
// writer waits for it, so a stream of readers can not starve a writer.
func TestWriterIsNotStarvedByLaterReaders(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	r1, w, r2 := newMutex(t, path), newMutex(t, path), newMutex(t, path)
	require.NoError(t, r1.RLock(ctx))
	wres := async(ctx, w.Lock)
	waitWatching(t, w, w.Writer(), 0)

	rres := async(ctx, r2.RLock)
	waitWatching(t, r2, r2.Reader(), 0)
	require.ErrorIs(t, newMutex(t, path).TryRLock(ctx), zklocks.ErrLocked, "TryRLock behind a waiting writer")
	requireWaiting(t, rres, "RLock behind a waiting writer")

	require.NoError(t, r1.RUnlock(ctx))
	requireAcquired(t, wres, "the writer, once the reader ahead of it left")
	requireWaiting(t, rres, "the later reader while the writer holds")
	require.NoError(t, w.Unlock(ctx))
	requireAcquired(t, rres, "the later reader, after the writer")
}

// A writer's release wakes exactly the readers behind it, up to the next
// writer; a reader's release wakes at most the one writer behind it.
// Counted from each waiter's side, once every wait is over.
func TestReleaseWakesOnlyThoseWhoCanHold(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	w1 := newMutex(t, path)
	require.NoError(t, w1.Lock(ctx))

	type waiter struct {
		m    *rwlock.Mutex
		read bool
		res  <-chan error
		base int64
	}
	var queue []*waiter
	for _, read := range []bool{true, true, true, false, true} { // r1 r2 r3 w2 r4
		x := &waiter{m: newMutex(t, path), read: read}
		acquire, s := x.m.Lock, x.m.Writer()
		if read {
			acquire, s = x.m.RLock, x.m.Reader()
		}
		x.res = async(ctx, acquire)
		waitWatching(t, x.m, s, 0)
		x.base = x.m.Stats().Notifications
		queue = append(queue, x)
	}
	r1, r2, r3, w2, r4 := queue[0], queue[1], queue[2], queue[3], queue[4]

	require.NoError(t, w1.Unlock(ctx))
	for i, r := range []*waiter{r1, r2, r3} {
		requireAcquired(t, r.res, "reader behind the writer")
		assert.Equal(t, int64(1), r.m.Stats().Notifications-r.base, "reader %d: woken once, by the writer's release", i+1)
	}
	requireWaiting(t, w2.res, "the writer behind the readers")
	requireWaiting(t, r4.res, "the reader behind that writer")

	require.NoError(t, r1.m.RUnlock(ctx))
	require.NoError(t, r2.m.RUnlock(ctx))
	requireWaiting(t, w2.res, "the writer while r3 still reads")
	require.NoError(t, r3.m.RUnlock(ctx))
	requireAcquired(t, w2.res, "the writer after the last reader")
	require.NoError(t, w2.m.Unlock(ctx))
	requireAcquired(t, r4.res, "the last reader")

	// w2 watched r3 only, and r4 watched w2 only: one event each.
	assert.Equal(t, int64(1), w2.m.Stats().Notifications-w2.base, "events that reached w2")
	assert.Equal(t, int64(1), r4.m.Stats().Notifications-r4.base, "events that reached r4")
}
