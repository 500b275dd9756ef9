package lockerr

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
)

func TestWrapPrefixesOnce(t *testing.T) {
	err := Wrap("x", "lock", "/a", fmt.Errorf("watch %s: %w", "/a/n", zk.ErrNoAuth))
	assert.EqualError(t, err, "x: lock /a: watch /a/n: zk: not authenticated")
	assert.ErrorIs(t, err, zk.ErrNoAuth)
	assert.Same(t, err, Wrap("x", "unlock", "/a", err), "an error with our prefix is not wrapped again")
	assert.NoError(t, Wrap("x", "lock", "/a", nil))
	assert.ErrorIs(t, Wrap("x", "lock", "/a", context.Canceled), context.Canceled)
}
