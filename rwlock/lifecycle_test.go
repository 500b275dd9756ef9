package rwlock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/rwlock"
)

// A reader's hold ends like a writer's: Done closes on RUnlock and on
// loss, Err says why, and a cancelled RLock leaves nothing behind.
func TestReaderLifecycle(t *testing.T) {
	t.Run("DoneOnRUnlock", func(t *testing.T) {
		ctx := testContext(t, 10*time.Second)
		r := newMutex(t, zktest.LockPath(t))
		require.NoError(t, r.RLock(ctx))
		done := r.Reader().Done()
		require.False(t, locktest.IsClosed(done))
		require.NoError(t, r.RUnlock(ctx))
		locktest.RequireClosedWithin(t, done, time.Second, "after RUnlock")
		assert.NoError(t, r.Reader().Err())
		assert.Zero(t, r.Reader().Token())
	})
	t.Run("DoneOnSessionExpiry", func(t *testing.T) {
		ctx := testContext(t, 20*time.Second)
		conn := zktest.Connect(t, zktest.WithSessionTimeout(locktest.ExpirySessionTimeout))
		r, err := rwlock.New(zktest.Session(t, conn), zktest.LockPath(t))
		require.NoError(t, err)
		require.NoError(t, r.RLock(ctx))
		zktest.ExpireSession(t, conn)
		locktest.RequireClosedWithin(t, r.Reader().Done(), 5*time.Second, "after the session expired")
		require.ErrorIs(t, r.Reader().Err(), zklocks.ErrLockLost)
		require.ErrorIs(t, r.RUnlock(ctx), zklocks.ErrLockLost, "RUnlock of a lost hold")
	})
	t.Run("CancelWhileWaitingLeavesNothing", func(t *testing.T) {
		ctx := testContext(t, 20*time.Second)
		path := zktest.LockPath(t)
		w := newMutex(t, path)
		require.NoError(t, w.Lock(ctx))
		conn := zktest.Connect(t)
		r, err := rwlock.New(zktest.Session(t, conn), path)
		require.NoError(t, err)
		rctx, cancel := context.WithCancel(ctx)
		res := async(rctx, r.RLock)
		waitWatching(t, r, r.Reader(), 0)
		cancel()
		err = <-res
		require.ErrorIs(t, err, context.Canceled)
		assert.True(t, strings.HasPrefix(err.Error(), "rwlock: rlock "+path+": "), "error shape: %v", err)
		assert.Empty(t, ownNodes(t, conn, path), "the reader's node after the cancelled RLock")
		require.NoError(t, w.Unlock(ctx))
	})
}
