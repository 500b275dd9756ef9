package reentrant_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/history"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/sequential"
)

// modes is the table every behavioural test runs over: both ways of
// keeping the count must pass the same tests.
var modes = []reentrant.CountMode{reentrant.InMemory, reentrant.InNode}

func forModes(t *testing.T, f func(t *testing.T, mode reentrant.CountMode)) {
	for _, mode := range modes {
		t.Run("mode="+mode.String(), func(t *testing.T) { f(t, mode) })
	}
}

// noLeaks makes t fail if a goroutine started during it outlives it (its
// sessions' closing included). Call it first in a non-parallel test.
func noLeaks(t *testing.T) {
	zktest.Servers(t) // the shared ensemble's goroutines predate the snapshot
	zktest.VerifyNoLeaks(t)
}

func newMutex(t testing.TB, conn *zk.Conn, path string, mode reentrant.CountMode) *reentrant.Mutex {
	t.Helper()
	m, err := reentrant.New(zktest.Session(t, conn), path, reentrant.WithCountMode(mode))
	require.NoError(t, err)
	return m
}

func owner(name string) context.Context {
	return reentrant.WithOwner(context.Background(), name)
}

// theNode returns the only child of path (failing if there is not exactly
// one), its holder record and its stat, read with raw, a plain client.
// zktest.Children syncs raw's server with the leader first, and the Get
// that follows goes to the same server on the same session, so both see
// every write the lock made before the call: ZooKeeper gives read-your-
// writes only within a session, and raw is another one.
func theNode(t *testing.T, raw *zk.Conn, path string) (string, reentrant.Holder, *zk.Stat) {
	t.Helper()
	kids := zktest.Children(t, raw, path)
	require.Len(t, kids, 1, "children of %s", path)
	data, stat, err := raw.Get(path + "/" + kids[0])
	require.NoError(t, err)
	h, err := reentrant.ParseHolder(data)
	require.NoError(t, err, "node data %q", data)
	return kids[0], h, stat
}

// contender adapts a Mutex to the conformance suite, which knows nothing
// of owners: each contender the suite makes is one Mutex with an owner of
// its own, injected into every call. A second Lock by the same contender
// is therefore a re-entry, which the suite checks (Variant.Reentrant).
type contender struct {
	*reentrant.Mutex
	owner string
}

func (c contender) ctx(ctx context.Context) context.Context { return reentrant.WithOwner(ctx, c.owner) }

func (c contender) Lock(ctx context.Context) error    { return c.Mutex.Lock(c.ctx(ctx)) }
func (c contender) TryLock(ctx context.Context) error { return c.Mutex.TryLock(c.ctx(ctx)) }
func (c contender) Unlock(ctx context.Context) error  { return c.Mutex.Unlock(c.ctx(ctx)) }

func TestConformance(t *testing.T) {
	forModes(t, func(t *testing.T, mode reentrant.CountMode) {
		var n atomic.Int64
		locktest.Run(t, locktest.Variant{
			Name: "reentrant/" + mode.String(),
			New: func(s *zklocks.Session, path string, opts ...zklocks.Option) (zklocks.Locker, error) {
				m, err := reentrant.New(s, path, append(opts, reentrant.WithCountMode(mode))...)
				if err != nil {
					return nil, err
				}
				return contender{m, fmt.Sprintf("contender-%d", n.Add(1))}, nil
			},
			FIFO:      true,
			Reentrant: true,
			Layout:    locktest.ChildrenOfPath,
		})
	})
}

func TestNewChecksArguments(t *testing.T) {
	_, err := reentrant.New(nil, "/a")
	assert.ErrorIs(t, err, zklocks.ErrNilSession)
	s := zktest.Connected(t) // New sends no request on it
	for _, p := range []string{"", "a", "/a/", "//a", "/a/../b", "/zookeeper/x", "/a\x00b"} {
		_, err := reentrant.New(s, p)
		assert.ErrorIs(t, err, zklocks.ErrBadPath, "path %q", p)
	}
	_, err = reentrant.New(s, "/a", reentrant.WithCountMode(reentrant.CountMode(9)))
	assert.ErrorIs(t, err, zklocks.ErrBadOption)
}

func TestOwnerFrom(t *testing.T) {
	_, ok := reentrant.OwnerFrom(context.Background())
	assert.False(t, ok)
	_, ok = reentrant.OwnerFrom(reentrant.WithOwner(context.Background(), ""))
	assert.False(t, ok, "an empty owner is no owner")
	o, ok := reentrant.OwnerFrom(reentrant.WithOwner(owner("a"), "b"))
	assert.True(t, ok)
	assert.Equal(t, "b", o, "the innermost WithOwner wins")
}

func TestParseHolder(t *testing.T) {
	h, err := reentrant.ParseHolder([]byte(`{"host":"web-3","pid":4711,"owner":"job-42","mode":"node","count":2}`))
	require.NoError(t, err)
	assert.Equal(t, reentrant.Holder{Host: "web-3", PID: 4711, Owner: "job-42", Mode: "node", Count: 2}, h)
	for _, bad := range []string{"", "null", "x", `{"host":"h"}`, `[1]`} {
		_, err := reentrant.ParseHolder([]byte(bad))
		assert.Error(t, err, "data %q", bad)
	}
}

// Calls without an owner fail before anything is sent.
func TestNoOwner(t *testing.T) {
	conn := zktest.Connect(t)
	path := zktest.LockPath(t)
	m := newMutex(t, conn, path, reentrant.InMemory)
	ctx := context.Background()
	assert.ErrorIs(t, m.Lock(ctx), reentrant.ErrNoOwner)
	assert.ErrorIs(t, m.TryLock(ctx), reentrant.ErrNoOwner)
	assert.ErrorIs(t, m.Unlock(ctx), reentrant.ErrNoOwner)
	assert.Zero(t, m.Stats().Requests)
	assert.Nil(t, zktest.Children(t, conn, path))
}

// Nested re-entry to depth 10 and back: one node for the whole hold, one
// token, the node released only when the count reaches zero. In InNode the
// count in the node's data is checked after every step with a raw client.
func TestNestedDepth10(t *testing.T) {
	forModes(t, func(t *testing.T, mode reentrant.CountMode) {
		noLeaks(t)
		conn, raw := zktest.Connect(t), zktest.Connect(t)
		path := zktest.LockPath(t)
		m := newMutex(t, conn, path, mode)
		ctx := owner("job-42")

		check := func(depth int, node string, token int64) (string, int64) {
			t.Helper()
			assert.Equal(t, depth, m.Count(ctx))
			n, h, _ := theNode(t, raw, path)
			if node != "" {
				assert.Equal(t, node, n, "the hold keeps its node")
				assert.Equal(t, token, m.Token(), "the hold keeps its token")
			}
			assert.Equal(t, "job-42", h.Owner)
			assert.Equal(t, mode.String(), h.Mode)
			if mode == reentrant.InNode {
				assert.Equal(t, depth, h.Count, "count in node data at depth %d", depth)
			} else {
				assert.Zero(t, h.Count, "InMemory writes no count")
			}
			assert.False(t, locktest.IsClosed(m.Done()))
			return n, m.Token()
		}

		var node string
		var token int64
		for depth := 1; depth <= 10; depth++ {
			require.NoError(t, m.Lock(ctx))
			node, token = check(depth, node, token)
		}
		done := m.Done()
		for depth := 9; depth >= 1; depth-- {
			require.NoError(t, m.Unlock(ctx))
			check(depth, node, token)
		}
		require.NoError(t, m.Unlock(ctx))
		assert.Empty(t, zktest.Children(t, raw, path), "released at zero")
		assert.True(t, locktest.IsClosed(done), "Done closes at the last Unlock")
		assert.Zero(t, m.Token())
		assert.Zero(t, m.Count(ctx))
		assert.ErrorIs(t, m.Unlock(ctx), zklocks.ErrNotLocked)
	})
}

// TryLock re-enters like Lock.
func TestTryLockReenters(t *testing.T) {
	forModes(t, func(t *testing.T, mode reentrant.CountMode) {
		conn := zktest.Connect(t)
		path := zktest.LockPath(t)
		m := newMutex(t, conn, path, mode)
		ctx := owner("a")
		require.NoError(t, m.TryLock(ctx))
		require.NoError(t, m.TryLock(ctx))
		require.NoError(t, m.Lock(ctx))
		assert.Equal(t, 3, m.Count(ctx))
		for range 3 {
			require.NoError(t, m.Unlock(ctx))
		}
		assert.Empty(t, zktest.Children(t, conn, path))
	})
}

// Unlock or TryLock by an owner that does not hold the lock fails and
// changes nothing: not the count, not the node, not its data.
func TestNonOwner(t *testing.T) {
	forModes(t, func(t *testing.T, mode reentrant.CountMode) {
		conn, raw := zktest.Connect(t), zktest.Connect(t)
		path := zktest.LockPath(t)
		m := newMutex(t, conn, path, mode)
		a, b := owner("a"), owner("b")

		assert.ErrorIs(t, m.Unlock(a), zklocks.ErrNotLocked, "nothing held")
		require.NoError(t, m.Lock(a))
		require.NoError(t, m.Lock(a))
		node, before, stat := theNode(t, raw, path)
		token := m.Token()

		err := m.Unlock(b)
		assert.ErrorIs(t, err, reentrant.ErrNotOwner)
		assert.EqualError(t, err, `reentrant: unlock `+path+`: not the owner: held by owner "a"`)
		assert.ErrorIs(t, m.TryLock(b), zklocks.ErrLocked)

		// Another Mutex (same session) and another session: not owners either.
		other := newMutex(t, conn, path, mode)
		assert.ErrorIs(t, other.Unlock(a), zklocks.ErrNotLocked, "a holds m, not other")
		assert.ErrorIs(t, other.TryLock(b), zklocks.ErrLocked)
		far := newMutex(t, zktest.Connect(t), path, mode)
		assert.ErrorIs(t, far.TryLock(a), zklocks.ErrLocked, "same owner name, other Mutex: a contender")

		assert.Equal(t, 2, m.Count(a))
		assert.Equal(t, token, m.Token())
		n, after, stat2 := theNode(t, raw, path)
		assert.Equal(t, node, n)
		assert.Equal(t, before, after)
		assert.Equal(t, stat.Version, stat2.Version, "no write")

		require.NoError(t, m.Unlock(a))
		require.NoError(t, m.Unlock(a))
		assert.Empty(t, zktest.Children(t, raw, path))
	})
}

// Owners exclude each other wherever they are: sharing one Mutex, each with
// its own Mutex on one session, or each on its own session. Each section is
// entered at depth 2; the recorded history must show no overlap and a
// token that grows from hold to hold (history.Check).
func TestOwnersExcludeEachOther(t *testing.T) {
	const owners, rounds = 3, 4
	setups := []struct {
		name  string
		mutex func(t *testing.T, path string, mode reentrant.CountMode) func(i int) *reentrant.Mutex
	}{
		{"one Mutex", func(t *testing.T, path string, mode reentrant.CountMode) func(int) *reentrant.Mutex {
			m := newMutex(t, zktest.Connect(t), path, mode)
			return func(int) *reentrant.Mutex { return m }
		}},
		{"one session", func(t *testing.T, path string, mode reentrant.CountMode) func(int) *reentrant.Mutex {
			conn := zktest.Connect(t)
			ms := make([]*reentrant.Mutex, owners)
			for i := range ms {
				ms[i] = newMutex(t, conn, path, mode)
			}
			return func(i int) *reentrant.Mutex { return ms[i] }
		}},
		{"two sessions", func(t *testing.T, path string, mode reentrant.CountMode) func(int) *reentrant.Mutex {
			ms := make([]*reentrant.Mutex, owners)
			for i := range ms {
				ms[i] = newMutex(t, zktest.Connect(t), path, mode)
			}
			return func(i int) *reentrant.Mutex { return ms[i] }
		}},
	}
	forModes(t, func(t *testing.T, mode reentrant.CountMode) {
		for _, s := range setups {
			t.Run(s.name, func(t *testing.T) {
				path := zktest.LockPath(t)
				mutexOf := s.mutex(t, path, mode)
				rec := history.NewRecorder()
				var inside atomic.Int32
				var g errgroup.Group
				for i := range owners {
					g.Go(func() error {
						m, who := mutexOf(i), fmt.Sprintf("owner-%d", i)
						ctx, cancel := context.WithTimeout(owner(who), 30*time.Second)
						defer cancel()
						for range rounds {
							if err := m.Lock(ctx); err != nil {
								return fmt.Errorf("%s: Lock: %w", who, err)
							}
							if err := m.Lock(ctx); err != nil {
								return fmt.Errorf("%s: re-entry: %w", who, err)
							}
							exit := rec.Enter(who, m.Token())
							if n := inside.Add(1); n != 1 {
								t.Errorf("%s entered with %d holders inside", who, n)
							}
							time.Sleep(5 * time.Millisecond)
							inside.Add(-1)
							exit()
							for range 2 {
								if err := m.Unlock(ctx); err != nil {
									return fmt.Errorf("%s: Unlock: %w", who, err)
								}
							}
						}
						return nil
					})
				}
				require.NoError(t, g.Wait())
				hist := rec.History()
				require.Len(t, hist, owners*rounds)
				require.NoError(t, history.Check(hist))
				assert.Empty(t, zktest.Children(t, zktest.Connect(t), path))
			})
		}
	})
}

// An owner waiting in this process for another owner's hold takes over
// when that hold is lost, without the loser having to Unlock; the loser's
// Unlocks then report the loss.
func TestWaiterTakesOverAfterLoss(t *testing.T) {
	forModes(t, func(t *testing.T, mode reentrant.CountMode) {
		noLeaks(t)
		conn, raw := zktest.Connect(t), zktest.Connect(t)
		path := zktest.LockPath(t)
		m := newMutex(t, conn, path, mode)
		a, b := owner("a"), owner("b")
		require.NoError(t, m.Lock(a))
		require.NoError(t, m.Lock(a))
		oldToken := m.Token()

		got := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(b, 20*time.Second)
			defer cancel()
			got <- m.Lock(ctx)
		}()
		time.Sleep(100 * time.Millisecond)
		select {
		case err := <-got:
			t.Fatalf("b got past a's hold: %v", err)
		default:
		}
		node, _, _ := theNode(t, raw, path)
		require.NoError(t, raw.Delete(path+"/"+node, -1))

		require.NoError(t, <-got)
		assert.Equal(t, 1, m.Count(b))
		assert.Greater(t, m.Token(), oldToken)
		_, h, _ := theNode(t, raw, path)
		assert.Equal(t, "b", h.Owner)

		for range 2 {
			assert.ErrorIs(t, m.Unlock(a), zklocks.ErrLockLost)
		}
		assert.ErrorIs(t, m.Unlock(a), reentrant.ErrNotOwner, "nothing more owed: b holds it")
		require.NoError(t, m.Unlock(b))
		assert.Empty(t, zktest.Children(t, raw, path))
	})
}

// Re-entry after loss: a second client deletes our node. Done closes, the
// count is gone, Unlock says the lock was lost (once per Lock of the lost
// hold), and a later Lock by the same owner takes a new node instead of
// counting on the dead one.
func TestReentryAfterLoss(t *testing.T) {
	forModes(t, func(t *testing.T, mode reentrant.CountMode) {
		noLeaks(t)
		conn, raw := zktest.Connect(t), zktest.Connect(t)
		path := zktest.LockPath(t)
		m := newMutex(t, conn, path, mode)
		ctx := owner("a")
		for range 3 {
			require.NoError(t, m.Lock(ctx))
		}
		done, oldToken := m.Done(), m.Token()
		oldNode, _, _ := theNode(t, raw, path)
		require.NoError(t, raw.Delete(path+"/"+oldNode, -1))

		locktest.RequireClosedWithin(t, done, zktest.DefaultSessionTimeout+time.Second, "after our node was deleted")
		assert.Zero(t, m.Count(ctx), "the count went with the hold")
		assert.Equal(t, oldToken, m.Token(), "the lost hold keeps its token until its Unlocks report the loss")
		assert.True(t, locktest.IsClosed(m.Done()))

		// The next Lock does not resurrect the old hold: new node, new token, depth 1.
		require.NoError(t, m.Lock(ctx))
		newNode, _, _ := theNode(t, raw, path)
		assert.NotEqual(t, oldNode, newNode)
		assert.Greater(t, m.Token(), oldToken)
		assert.Equal(t, 1, m.Count(ctx))
		assert.False(t, locktest.IsClosed(m.Done()))

		// Innermost first: this Unlock belongs to the new hold.
		require.NoError(t, m.Unlock(ctx))
		assert.Empty(t, zktest.Children(t, raw, path))
		// The three Unlocks owed to the lost hold report the loss.
		for range 3 {
			err := m.Unlock(ctx)
			assert.ErrorIs(t, err, zklocks.ErrLockLost)
			assert.ErrorContains(t, err, "node deleted", "the reason stays in the message")
		}
		assert.ErrorIs(t, m.Unlock(ctx), zklocks.ErrNotLocked)
		assert.Zero(t, m.Token())
	})
}

// The session of a holder at depth 3 expires: Done closes, the three
// Unlocks owed report the loss, and the same Mutex locks again on the
// connection's new session.
func TestSessionExpiryAtDepth(t *testing.T) {
	forModes(t, func(t *testing.T, mode reentrant.CountMode) {
		noLeaks(t)
		conn := zktest.Connect(t, zktest.WithSessionTimeout(time.Second))
		path := zktest.LockPath(t)
		m, err := reentrant.New(zktest.Session(t, conn), path, reentrant.WithCountMode(mode))
		require.NoError(t, err)
		ctx := owner("a")
		for range 3 {
			require.NoError(t, m.Lock(ctx))
		}
		done, token := m.Done(), m.Token()
		zktest.ExpireSession(t, conn)
		locktest.RequireClosedWithin(t, done, 3*time.Second, "after the session expired")
		assert.Zero(t, m.Count(ctx))
		for i := range 3 {
			assert.Equal(t, token, m.Token(), "Token before owed Unlock %d: the lost hold's", i+1)
			assert.ErrorIs(t, m.Unlock(ctx), zklocks.ErrLockLost)
		}
		assert.Zero(t, m.Token(), "every owed Unlock has reported the loss")
		assert.ErrorIs(t, m.Unlock(ctx), zklocks.ErrNotLocked)
		require.NoError(t, m.Lock(ctx))
		assert.Greater(t, m.Token(), token)
		require.NoError(t, m.Unlock(ctx))
		assert.Empty(t, zktest.Children(t, conn, path))
	})
}

// Someone else writes to our node. InNode notices at its next versioned
// write (BadVersion) and ends the hold as lost, deleting its node; InMemory
// never writes and keeps the hold (the node is still ours).
func TestForeignWrite(t *testing.T) {
	forModes(t, func(t *testing.T, mode reentrant.CountMode) {
		noLeaks(t)
		conn, raw := zktest.Connect(t), zktest.Connect(t)
		path := zktest.LockPath(t)
		m := newMutex(t, conn, path, mode)
		ctx := owner("a")
		require.NoError(t, m.Lock(ctx))
		require.NoError(t, m.Lock(ctx))
		node, _, _ := theNode(t, raw, path)
		_, err := raw.Set(path+"/"+node, []byte("scribble"), -1)
		require.NoError(t, err)

		err = m.Unlock(ctx)
		if mode == reentrant.InMemory {
			require.NoError(t, err)
			require.NoError(t, m.Unlock(ctx))
			assert.Empty(t, zktest.Children(t, raw, path))
			return
		}
		assert.ErrorIs(t, err, zklocks.ErrLockLost)
		assert.ErrorIs(t, err, zk.ErrBadVersion)
		assert.Empty(t, zktest.Children(t, raw, path), "the hold we no longer trust is removed")
		assert.ErrorIs(t, m.Unlock(ctx), zklocks.ErrLockLost, "the outer Lock's Unlock")
		assert.ErrorIs(t, m.Unlock(ctx), zklocks.ErrNotLocked)
	})
}

// A count write whose answer the connection takes with it does not cost
// the hold: the connection is cut (well within the session timeout) while
// a re-entry and then an inner Unlock write the count. The write is read
// back once the client is back (we are the node's only writer, so its
// version says whether it was applied), and the hold goes on: same node,
// same token, the count right in memory and in the node.
func TestCountWriteSurvivesBlip(t *testing.T) {
	noLeaks(t)
	// A holder gives up its hold after about a fifth of the session timeout
	// without a connection (internal/hold), so the session is long enough
	// for the blip below (1.5s, plus up to a second to reconnect) to stay
	// well within it.
	const session = 15 * time.Second
	cut := zktest.NewCutter()
	conn := zktest.Connect(t, zktest.WithDialer(cut.Dialer()), zktest.WithSessionTimeout(session))
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	m, err := reentrant.New(zktest.Session(t, conn), path, reentrant.WithCountMode(reentrant.InNode))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(owner("a"), 30*time.Second)
	defer cancel()
	require.NoError(t, m.Lock(ctx))
	node, _, _ := theNode(t, raw, path)
	token, done, sid := m.Token(), m.Done(), conn.SessionID()

	for _, step := range []struct {
		name  string
		call  func(context.Context) error
		depth int
	}{{"re-entry", m.Lock, 2}, {"inner Unlock", m.Unlock, 1}} {
		cut.Cut()
		// go-zookeeper fails a request queued while it can not reach a
		// server once its next round of dials has failed (about a second):
		// heal after that, so the count write fails for want of a
		// connection, with its outcome unknown to the lock.
		time.AfterFunc(1500*time.Millisecond, cut.Heal)
		require.NoError(t, step.call(ctx), step.name)
		assert.Equal(t, step.depth, m.Count(ctx), "%s: depth", step.name)
		assert.Equal(t, token, m.Token(), "%s: the hold keeps its token", step.name)
		assert.False(t, locktest.IsClosed(done), "%s: the hold goes on", step.name)
		n, h, _ := theNode(t, raw, path)
		assert.Equal(t, node, n, "%s: the hold keeps its node", step.name)
		assert.Equal(t, step.depth, h.Count, "%s: count in the node", step.name)
	}
	require.Equal(t, sid, conn.SessionID(), "the session survived the cuts")
	require.NoError(t, m.Unlock(ctx))
	assert.Empty(t, zktest.Children(t, raw, path))
	assert.ErrorIs(t, m.Unlock(ctx), zklocks.ErrNotLocked)
}

// A second Lock by an owner whose first Lock is still waiting is refused.
func TestSameOwnerWhileAcquiring(t *testing.T) {
	noLeaks(t)
	conn := zktest.Connect(t)
	path := zktest.LockPath(t)
	holder := newMutex(t, zktest.Connect(t), path, reentrant.InMemory)
	require.NoError(t, holder.Lock(owner("x")))
	m := newMutex(t, conn, path, reentrant.InMemory)

	ctx, cancel := context.WithCancel(owner("a"))
	got := make(chan error, 1)
	go func() { got <- m.Lock(ctx) }()
	require.Eventually(t, func() bool { return len(zktest.Children(t, conn, path)) == 2 }, 5*time.Second, 10*time.Millisecond)
	assert.ErrorIs(t, m.Lock(owner("a")), zklocks.ErrAlreadyLocked)
	assert.ErrorIs(t, m.Unlock(owner("a")), zklocks.ErrNotLocked)
	cancel()
	assert.ErrorIs(t, <-got, context.Canceled)
	require.NoError(t, holder.Unlock(owner("x")))
	assert.Empty(t, zktest.Children(t, conn, path))
}

// Two goroutines of one owner Lock an idle Mutex at once: one takes the
// node, the other re-enters or is told ErrAlreadyLocked, and neither
// waits behind its own owner's hold (which would last until they both
// returned: a deadlock).
func TestSameOwnerRacingForAnIdleMutex(t *testing.T) {
	conn := zktest.Connect(t)
	path := zktest.LockPath(t)
	m := newMutex(t, conn, path, reentrant.InMemory)
	for round := range 30 {
		ctx, cancel := context.WithTimeout(owner("a"), 5*time.Second)
		errs := make(chan error, 2)
		for range 2 {
			go func() { errs <- m.Lock(ctx) }()
		}
		locks := 0
		for range 2 {
			switch err := <-errs; {
			case err == nil:
				locks++
			case errors.Is(err, zklocks.ErrAlreadyLocked):
			default:
				t.Fatalf("round %d: %v (want nil or ErrAlreadyLocked)", round, err)
			}
		}
		cancel()
		if locks == 0 {
			t.Fatalf("round %d: neither goroutine locked", round)
		}
		for range locks {
			require.NoError(t, m.Unlock(owner("a")), "round %d", round)
		}
		require.Empty(t, zktest.Children(t, conn, path), "round %d", round)
	}
}

// An owner waiting in this process gives up with its ctx and leaves
// nothing behind: it never created a node.
func TestCancelWhileWaitingInProcess(t *testing.T) {
	noLeaks(t)
	conn := zktest.Connect(t)
	path := zktest.LockPath(t)
	m := newMutex(t, conn, path, reentrant.InMemory)
	require.NoError(t, m.Lock(owner("a")))
	ctx, cancel := context.WithTimeout(owner("b"), 100*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, m.Lock(ctx), context.DeadlineExceeded)
	assert.Len(t, zktest.Children(t, conn, path), 1)
	require.NoError(t, m.Unlock(owner("a")))
	require.NoError(t, m.Lock(owner("b")), "the turn is free again")
	require.NoError(t, m.Unlock(owner("b")))
	assert.Empty(t, zktest.Children(t, conn, path))
}

// Inspection: the queue shows who holds and who waits, from any client.
func TestContendersShowHolders(t *testing.T) {
	conn, raw := zktest.Connect(t), zktest.Connect(t)
	path := zktest.LockPath(t)
	m := newMutex(t, conn, path, reentrant.InNode)
	require.NoError(t, m.Lock(owner("job-1")))
	require.NoError(t, m.Lock(owner("job-1")))
	w := newMutex(t, zktest.Connect(t), path, reentrant.InNode)
	ctx, cancel := context.WithCancel(owner("job-2"))
	defer cancel()
	got := make(chan error, 1)
	go func() { got <- w.Lock(ctx) }()
	require.Eventually(t, func() bool { return len(zktest.Children(t, raw, path)) == 2 }, 5*time.Second, 10*time.Millisecond)

	cs, err := sequential.Contenders(context.Background(), zktest.Session(t, raw), path)
	require.NoError(t, err)
	require.Len(t, cs, 2)
	var got0, got1 reentrant.Holder
	got0, err = reentrant.ParseHolder(cs[0].Data)
	require.NoError(t, err)
	got1, err = reentrant.ParseHolder(cs[1].Data)
	require.NoError(t, err)
	assert.Equal(t, "job-1", got0.Owner)
	assert.Equal(t, 2, got0.Count)
	assert.NotZero(t, got0.PID)
	assert.Equal(t, "job-2", got1.Owner)
	assert.Equal(t, 1, got1.Count)

	cancel()
	assert.ErrorIs(t, <-got, context.Canceled)
	require.NoError(t, m.Unlock(owner("job-1")))
	require.NoError(t, m.Unlock(owner("job-1")))
	assert.Empty(t, zktest.Children(t, raw, path))
}

// BenchmarkReentry measures what one more level of re-entry costs in each
// count mode. One op is a nested Lock and its Unlock on a lock already held
// by the same owner (re-enter one level, step back). requests/op and
// notifications/op come from the Mutex's own Stats: InMemory sends nothing,
// InNode sends two versioned writes (plus the hold monitor's occasional
// re-read, since each write fires the holder's own data watch).
//
//	go test -run '^$' -bench BenchmarkReentry -benchtime 2s ./reentrant/
func BenchmarkReentry(b *testing.B) {
	for _, mode := range modes {
		b.Run("mode="+mode.String(), func(b *testing.B) {
			conn := zktest.Connect(b)
			m := newMutex(b, conn, zktest.LockPath(b), mode)
			ctx := owner("bench")
			require.NoError(b, m.Lock(ctx))
			before := m.Stats()
			for b.Loop() {
				if err := m.Lock(ctx); err != nil {
					b.Fatal(err)
				}
				if err := m.Unlock(ctx); err != nil {
					b.Fatal(err)
				}
			}
			after := m.Stats()
			b.ReportMetric(float64(after.Requests-before.Requests)/float64(b.N), "requests/op")
			b.ReportMetric(float64(after.Notifications-before.Notifications)/float64(b.N), "notifications/op")
			require.NoError(b, m.Unlock(ctx))
		})
	}
}

// BenchmarkReentryWithWaiter is BenchmarkReentry with a second contender
// (another session) queued behind the holder. The waiter watches the
// holder's node with a data watch, so in InNode each count write wakes it
// and it sets its watch again: waiter-requests/op and
// waiter-notifications/op are that hidden cost, paid by someone else.
func BenchmarkReentryWithWaiter(b *testing.B) {
	for _, mode := range modes {
		b.Run("mode="+mode.String(), func(b *testing.B) {
			path := zktest.LockPath(b)
			m := newMutex(b, zktest.Connect(b), path, mode)
			w := newMutex(b, zktest.Connect(b), path, mode)
			ctx := owner("bench")
			require.NoError(b, m.Lock(ctx))
			wctx, cancel := context.WithCancel(owner("waiter"))
			got := make(chan error, 1)
			go func() { got <- w.Lock(wctx) }()
			raw := zktest.Connect(b)
			require.Eventually(b, func() bool { return len(zktest.Children(b, raw, path)) == 2 }, 5*time.Second, time.Millisecond)
			time.Sleep(50 * time.Millisecond) // let the waiter set its watch

			before, wbefore := m.Stats(), w.Stats()
			for b.Loop() {
				if err := m.Lock(ctx); err != nil {
					b.Fatal(err)
				}
				if err := m.Unlock(ctx); err != nil {
					b.Fatal(err)
				}
			}
			after, wafter := m.Stats(), w.Stats()
			n := float64(b.N)
			b.ReportMetric(float64(after.Requests-before.Requests)/n, "requests/op")
			b.ReportMetric(float64(wafter.Requests-wbefore.Requests)/n, "waiter-requests/op")
			b.ReportMetric(float64(wafter.Notifications-wbefore.Notifications)/n, "waiter-notifications/op")
			cancel()
			<-got
			require.NoError(b, m.Unlock(ctx))
		})
	}
}
