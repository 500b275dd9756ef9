package lockerr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
)

func sentinels(prefix string) Sentinels {
	return Sentinels{
		BadPath:       errors.New(prefix + "invalid lock path"),
		NilConn:       errors.New(prefix + "nil connection"),
		Locked:        errors.New(prefix + "locked by another session"),
		NotLocked:     errors.New(prefix + "lock not held"),
		LockLost:      errors.New(prefix + "lock lost"),
		AlreadyLocked: errors.New(prefix + "already locked by this mutex"),
	}
}

var theirs, ours = sentinels(""), sentinels("")

func TestWrapPrefixesOnce(t *testing.T) {
	err := Wrap("x", "lock", "/a", fmt.Errorf("watch %s: %w", "/a/n", zk.ErrNoAuth))
	assert.EqualError(t, err, "x: lock /a: watch /a/n: zk: not authenticated")
	assert.ErrorIs(t, err, zk.ErrNoAuth)
	assert.Same(t, err, Wrap("x", "unlock", "/a", err), "an error with our prefix is not wrapped again")
	assert.NoError(t, Wrap("x", "lock", "/a", nil))
	assert.ErrorIs(t, Wrap("x", "lock", "/a", context.Canceled), context.Canceled)
}

func TestRebrandKeepsBothSentinelsAndOnePrefix(t *testing.T) {
	for _, c := range []struct{ theirs, ours error }{
		{theirs.BadPath, ours.BadPath},
		{theirs.NilConn, ours.NilConn},
		{theirs.Locked, ours.Locked},
		{theirs.NotLocked, ours.NotLocked},
		{theirs.LockLost, ours.LockLost},
		{theirs.AlreadyLocked, ours.AlreadyLocked},
	} {
		below := Wrap("seq", "lock", "/a", fmt.Errorf("%w: detail", c.theirs))
		err := Wrap("x", "lock", "/a", Rebrand(below, theirs, ours))
		assert.ErrorIs(t, err, c.ours)
		assert.ErrorIs(t, err, c.theirs)
		assert.Equal(t, "x: lock /a: "+c.theirs.Error()+": detail", err.Error())
	}
}

func TestRebrandPassesOtherErrors(t *testing.T) {
	err := Wrap("x", "lock", "/a", Rebrand(Wrap("seq", "lock", "/a", context.DeadlineExceeded), theirs, ours))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "x: lock /a: context deadline exceeded")
	assert.NoError(t, Rebrand(nil, theirs, ours))
}
