package sequential_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
)

// A client asks the holder to let go: the holder's Revoked closes, and
// nothing else changes until the holder decides: it still holds, with
// the same token, and the waiter behind it is not asked. Its Unlock then
// lets the waiter in as usual.
func TestRevokeAsksTheHolder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := zktest.LockPath(t)
	holder, err := sequential.New(zktest.Session(t, zktest.Connect(t)), path)
	require.NoError(t, err)
	waiter, err := sequential.New(zktest.Session(t, zktest.Connect(t)), path)
	require.NoError(t, err)
	assert.Nil(t, holder.Revoked(), "not held: a channel that never closes")

	require.NoError(t, holder.Lock(ctx))
	token := holder.Token()
	got := make(chan error, 1)
	go func() { got <- waiter.Lock(ctx) }()
	raw := zktest.Connect(t)
	require.Eventually(t, func() bool { return len(zktest.Children(t, raw, path)) == 2 }, 10*time.Second, 10*time.Millisecond)

	node, err := sequential.Revoke(ctx, zktest.Session(t, raw), path)
	require.NoError(t, err)
	assert.Equal(t, holder.Node(), node, "the holder is the one asked")
	locktest.RequireClosedWithin(t, holder.Revoked(), 5*time.Second, "after Revoke")
	assert.False(t, locktest.IsClosed(holder.Done()), "asking ends nothing")
	select { // the write fired the waiter's data watch on the holder's node too
	case err := <-got:
		t.Fatalf("the waiter got in on the request alone: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	assert.Equal(t, token, holder.Token())
	data, _, err := raw.Get(node)
	require.NoError(t, err)
	assert.Equal(t, hold.RevokeRequest, data, "the request is Curator's bytes")

	again, err := sequential.Revoke(ctx, zktest.Session(t, raw), path)
	require.NoError(t, err, "asking twice is asking once")
	assert.Equal(t, node, again)

	require.NoError(t, holder.Unlock(ctx))
	require.NoError(t, <-got)
	assert.False(t, locktest.IsClosed(waiter.Revoked()), "the next holder was not asked")
	require.NoError(t, waiter.Unlock(ctx))
}

// Revoke with nobody holding, or with bad arguments, fails clearly and
// writes nothing.
func TestRevokeRefusesBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := zktest.Session(t, zktest.Connect(t))
	for _, tc := range []struct {
		name string
		s    *zklocks.Session
		path string
		want error
	}{
		{"NobodyHolds", s, zktest.LockPath(t), zklocks.ErrNotLocked},
		{"NilSession", nil, "/l", zklocks.ErrNilSession},
		{"BadPath", s, "l/", zklocks.ErrBadPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node, err := sequential.Revoke(ctx, tc.s, tc.path)
			assert.ErrorIs(t, err, tc.want)
			assert.Empty(t, node)
			assert.ErrorContains(t, err, "sequential: revoke")
		})
	}
}
