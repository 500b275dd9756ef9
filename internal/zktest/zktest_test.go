package zktest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

func TestLockPathUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		p := zktest.LockPath(t)
		require.False(t, seen[p], "LockPath repeated %s", p)
		seen[p] = true
		assert.True(t, strings.HasPrefix(p, zktest.Root+"/TestLockPathUnique-"), p)
	}
	t.Run("sub test/with spaces#1", func(t *testing.T) {
		p := zktest.LockPath(t)
		rest := strings.TrimPrefix(p, zktest.Root+"/")
		assert.NotContains(t, rest, "/", "one path segment below Root: %s", p)
		assert.NotContains(t, rest, " ")
		assert.True(t, strings.HasPrefix(rest, "TestLockPathUnique_sub_test_with_spaces_1-"), p)
	})
}

func TestServersFromEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("Servers skips under -short")
	}
	t.Setenv("ZK_SERVERS", " 127.0.0.1:2181, 127.0.0.1:2182 ,,")
	assert.Equal(t, []string{"127.0.0.1:2181", "127.0.0.1:2182"}, zktest.Servers(t))
}

func TestEnsembleSkipsWithExternalServers(t *testing.T) {
	var inner *testing.T
	t.Run("external", func(t *testing.T) {
		inner = t
		t.Setenv("ZK_SERVERS", "127.0.0.1:2181")
		zktest.Ensemble(t)
		t.Error("Ensemble did not skip")
	})
	assert.True(t, inner.Skipped())
}

func TestConnect(t *testing.T) {
	zktest.VerifyNoLeaks(t)
	conn := zktest.Connect(t)
	require.Equal(t, zk.StateHasSession, conn.State())

	path := zktest.LockPath(t)
	assert.Nil(t, zktest.Children(t, conn, path), "no node yet")
	_, err := conn.Create(zktest.Root, nil, 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrNodeExists) {
		require.NoError(t, err)
	}
	_, err = conn.Create(path, []byte("x"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = conn.Create(path+"/b", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = conn.Create(path+"/a", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, zktest.Children(t, conn, path))

	other := zktest.Connect(t, zktest.WithSessionTimeout(5*time.Second))
	assert.NotEqual(t, conn.SessionID(), other.SessionID(), "one session per Connect")
	_, err = other.Sync(path)
	require.NoError(t, err)
	data, _, err := other.Get(path)
	require.NoError(t, err)
	assert.Equal(t, "x", string(data))
}

// waitState reads events until one with state want arrives.
func waitState(t *testing.T, events <-chan zk.Event, want zk.State, within time.Duration) {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case ev := <-events:
			if ev.Type == zk.EventSession && ev.State == want {
				return
			}
		case <-timer.C:
			t.Fatalf("no %v event within %v", want, within)
		}
	}
}

// gone blocks until path is deleted and returns how long that took. It
// syncs first: conn's server may not yet have applied the create of path
// by another session, and would then call it gone at once (this failed a
// CI run: "deleted 11ms after the cut").
func gone(t *testing.T, conn *zk.Conn, path string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	_, err := conn.Sync(path)
	require.NoError(t, err, "sync %s", path)
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		ok, _, ch, err := conn.ExistsW(path)
		require.NoError(t, err)
		if !ok {
			return time.Since(start)
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("%s still exists after %v", path, within)
		}
	}
}

func TestCutterExpiresSession(t *testing.T) {
	zktest.VerifyNoLeaks(t)
	const timeout = time.Second
	events := make(chan zk.Event, 64)
	cutter := zktest.NewCutter()
	conn := zktest.Connect(t, zktest.WithSessionTimeout(timeout), zktest.WithDialer(cutter.Dialer()),
		zktest.WithEvents(events))
	observer := zktest.Connect(t)
	sid := conn.SessionID()

	node := zktest.LockPath(t)
	_, err := observer.Create(zktest.Root, nil, 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrNodeExists) {
		require.NoError(t, err)
	}
	_, err = conn.Create(node, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	cutter.Cut()
	assert.True(t, cutter.IsCut())
	waitState(t, events, zk.StateDisconnected, 5*time.Second)
	took := gone(t, observer, node, 10*timeout)
	t.Logf("ephemeral node of the cut session deleted %v after the cut (session timeout %v)", took, timeout)
	assert.GreaterOrEqual(t, took, timeout/2, "the session outlived the cut for about its timeout")

	cutter.Heal()
	waitState(t, events, zk.StateExpired, 10*time.Second)
	waitState(t, events, zk.StateHasSession, 10*time.Second)
	assert.NotEqual(t, sid, conn.SessionID(), "a new session after the expiry")
}

func TestExpireSession(t *testing.T) {
	zktest.VerifyNoLeaks(t)
	events := make(chan zk.Event, 64)
	conn := zktest.Connect(t, zktest.WithSessionTimeout(time.Second), zktest.WithEvents(events))
	sid := conn.SessionID()
	start := time.Now()
	zktest.ExpireSession(t, conn)
	t.Logf("ExpireSession took %v", time.Since(start))
	assert.NotEqual(t, sid, conn.SessionID())
	assert.Equal(t, zk.StateHasSession, conn.State())
	waitState(t, events, zk.StateExpired, time.Second)
}

func TestEnsembleRestartsWhatATestStopped(t *testing.T) {
	var e interface{ Running(int) bool }
	t.Run("kills a member", func(t *testing.T) {
		ens := zktest.Ensemble(t)
		e = ens
		require.NoError(t, ens.Kill(1))
		require.False(t, ens.Running(1))
	})
	if e == nil {
		t.Skip("no local ensemble")
	}
	assert.True(t, e.Running(1), "the member is back after the subtest's cleanup")
}
