package lockerr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"

	"github.com/zklocks/zklocks/sequential"
)

var ours = Sentinels{
	BadPath:       errors.New("x: invalid lock path"),
	NilConn:       errors.New("x: nil connection"),
	Locked:        errors.New("x: locked by another session"),
	NotLocked:     errors.New("x: lock not held"),
	LockLost:      errors.New("x: lock lost"),
	AlreadyLocked: errors.New("x: already locked by this mutex"),
}

func TestFromSequentialRenamesSentinels(t *testing.T) {
	for _, c := range []struct{ theirs, ours error }{
		{sequential.ErrBadPath, ours.BadPath},
		{sequential.ErrNilConn, ours.NilConn},
		{sequential.ErrLocked, ours.Locked},
		{sequential.ErrNotLocked, ours.NotLocked},
		{sequential.ErrLockLost, ours.LockLost},
		{sequential.ErrAlreadyLocked, ours.AlreadyLocked},
	} {
		err := FromSequential("x", ours, fmt.Errorf("%w: detail", c.theirs))
		assert.ErrorIs(t, err, c.ours)
		assert.ErrorIs(t, err, c.theirs)
		assert.Regexp(t, `^x: `, err.Error())
	}
}

func TestFromSequentialPrefixesOtherErrors(t *testing.T) {
	err := FromSequential("x", ours, fmt.Errorf("sequential: create in /a: %w", zk.ErrNoAuth))
	assert.EqualError(t, err, "x: sequential: create in /a: zk: not authenticated")
	assert.ErrorIs(t, err, zk.ErrNoAuth)

	err = FromSequential("x", ours, fmt.Errorf("sequential: lock /a: %w", context.DeadlineExceeded))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestFromSequentialKeepsNil(t *testing.T) {
	assert.NoError(t, FromSequential("x", ours, nil))
}
