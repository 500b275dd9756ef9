package rwlock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zkpath"
	"github.com/zklocks/zklocks/internal/zktest"
)

// plant creates an ephemeral sequential node named prefix<seq> under
// path on conn's session (making path when missing), as another client
// would, and returns its full path.
func plant(t *testing.T, conn *zk.Conn, path, prefix string) string {
	t.Helper()
	for _, p := range append(zkpath.Ancestors(path), path) {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNodeExists) {
			require.NoError(t, err)
		}
	}
	node, err := conn.Create(path+"/"+prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	return node
}

// Every client's names: a reader waits for the writers of all of them,
// and shares the lock with the readers of all of them; anything else
// with a sequence number is taken as a writer.
func TestNamesOfOtherClients(t *testing.T) {
	const uuid = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
	for _, tc := range []struct {
		client, prefix string
		reader         bool
	}{
		{"rwlock reader", "_c_0123456789abcdef0123456789abcdef-__READ__", true},
		{"rwlock writer", "_c_0123456789abcdef0123456789abcdef-__WRIT__", false},
		{"Curator read lock", "_c_" + uuid + "-__READ__", true},
		{"Curator write lock", "_c_" + uuid + "-__WRIT__", false},
		{"kazoo ReadLock", "0123456789abcdef0123456789abcdef__rlock__", true},
		{"kazoo WriteLock or Lock", "0123456789abcdef0123456789abcdef__lock__", false},
		{"sequential, Curator's mutex", "_c_" + uuid + "-lock-", false},
		{"go-zookeeper's Lock", "_c_" + uuid + "-lock-", false},
		{"go-zookeeper's Lock, unprotected", "lock-", false},
	} {
		t.Run(strings.ReplaceAll(tc.client, " ", "_"), func(t *testing.T) {
			ctx := testContext(t, 10*time.Second)
			path := zktest.LockPath(t)
			plant(t, zktest.Connect(t), path, tc.prefix)
			m := newMutex(t, path)

			require.ErrorIs(t, m.TryLock(ctx), zklocks.ErrLocked, "TryLock: every contender blocks a writer")
			err := m.TryRLock(ctx)
			if tc.reader {
				require.NoError(t, err, "TryRLock beside a reader")
				require.NoError(t, m.RUnlock(ctx))
			} else {
				require.ErrorIs(t, err, zklocks.ErrLocked, "TryRLock: a writer blocks a reader")
			}
		})
	}
}

// kazoo #649: kazoo 2.8's ReadLock watched the last writer in the whole
// queue, one behind it too, which waited for the reader: a deadlock. A
// reader must look only ahead of its node. Here the reader's second
// listing sees a writer behind it; it must watch the one ahead.
func TestReaderWatchesNoWriterBehindIt(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	other := zktest.Connect(t)
	holder := plant(t, other, path, "aaaa__lock__")
	waiting := plant(t, other, path, "bbbb__lock__")

	r := newMutex(t, path)
	res := async(ctx, r.RLock)
	waitWatching(t, r, r.Reader(), 0) // on waiting, the closest writer ahead
	behind := plant(t, other, path, "cccc__lock__")

	require.NoError(t, other.Delete(waiting, -1)) // it gives up: r lists again
	requireWaiting(t, res, "RLock while the holder writes")
	require.NoError(t, other.Delete(holder, -1))
	requireAcquired(t, res, "RLock once no writer is ahead, with one behind")

	ok, _, err := other.Exists(behind)
	require.NoError(t, err)
	assert.True(t, ok, "the writer behind is still there, waiting for the reader")
	require.NoError(t, r.RUnlock(ctx))
}
