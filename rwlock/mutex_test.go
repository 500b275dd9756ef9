package rwlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/rwlock"
)

// The write lock is a mutex like the others: the whole conformance suite
// runs against the writer side.
func TestConformance(t *testing.T) {
	locktest.Run(t, locktest.Variant{
		Name: "rwlock",
		New: func(s *zklocks.Session, path string, opts ...zklocks.Option) (zklocks.Locker, error) {
			m, err := rwlock.New(s, path, opts...)
			if err != nil {
				return nil, err
			}
			return m.Writer(), nil
		},
		FIFO:   true,
		Layout: locktest.ChildrenOfPath,
	})
}

const sessionTimeout = zktest.DefaultSessionTimeout

// newMutex is one contender: a session of its own and a Mutex on it.
func newMutex(t *testing.T, path string) *rwlock.Mutex {
	t.Helper()
	m, err := rwlock.New(zktest.Connected(t), path)
	require.NoError(t, err)
	return m
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// async runs an acquisition in a goroutine.
func async(ctx context.Context, acquire func(context.Context) error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- acquire(ctx) }()
	return ch
}

// waitWatching waits until side s has its node and has set the watch of
// its wait: its requests reach create, own-node watch, list, watch.
func waitWatching(t *testing.T, m *rwlock.Mutex, s *rwlock.Side, base int64) {
	t.Helper()
	require.Eventually(t, func() bool { return s.Node() != "" }, 5*time.Second, 2*time.Millisecond, "contender queued")
	require.Eventually(t, func() bool { return m.Stats().Requests >= base+4 }, 5*time.Second, 2*time.Millisecond,
		"contender watching")
}

func requireWaiting(t *testing.T, res <-chan error, what string) {
	t.Helper()
	select {
	case err := <-res:
		t.Fatalf("%s: returned (%v) while it must wait", what, err)
	default:
	}
}

func requireAcquired(t *testing.T, res <-chan error, what string) {
	t.Helper()
	select {
	case err := <-res:
		require.NoError(t, err, what)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still waiting after 10s", what)
	}
}

// ownNodes lists the full paths of the children of path that conn's
// session owns, after a sync.
func ownNodes(t *testing.T, conn *zk.Conn, path string) []string {
	t.Helper()
	_, err := conn.Sync(path)
	require.NoError(t, err)
	var out []string
	for _, name := range zktest.Children(t, conn, path) {
		ok, st, err := conn.Exists(path + "/" + name)
		require.NoError(t, err)
		if ok && st.EphemeralOwner == conn.SessionID() {
			out = append(out, path+"/"+name)
		}
	}
	return out
}
