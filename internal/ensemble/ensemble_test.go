package ensemble

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		panicWithRunningEnsemble() // see TestNoJVMOutlivesPanic
	}
	os.Exit(m.Run())
}

// startForTest starts an ensemble that the test closes when it ends. With
// no ZooKeeper installed it fails (never skips) with ErrNoZooKeeper's
// how-to message.
func startForTest(t *testing.T, cfg Config) *Ensemble {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts ZooKeeper; run without -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	t0 := time.Now()
	e, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err) // with no ZooKeeper: ErrNoZooKeeper's how-to message
	}
	t.Logf("%d-node ZooKeeper %s ensemble up in %v (tick %v, forceSync %v): %s",
		e.Size(), e.Version(), time.Since(t0).Round(time.Millisecond), e.Config().TickTime,
		e.Config().ForceSync, e.ConnectString())
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	return e
}

// connect opens a client session to servers and waits for it.
func connect(t *testing.T, servers ...string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect(servers, 4*time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range events {
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	require.Eventually(t, func() bool { return conn.State() == zk.StateHasSession }, 10*time.Second, 10*time.Millisecond)
	return conn
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

func modes(t *testing.T, e *Ensemble) []string {
	t.Helper()
	var out []string
	for _, s := range e.Servers() {
		st, err := ServerStatus(s)
		if err != nil {
			out = append(out, "unreachable")
			continue
		}
		out = append(out, st.Mode)
	}
	return out
}

func TestEnsemble(t *testing.T) {
	e := startForTest(t, DefaultConfig())
	require.Equal(t, 3, e.Size())
	require.Len(t, e.Servers(), 3)
	assert.Equal(t, strings.Join(e.Servers(), ","), e.ConnectString())
	assert.True(t, strings.HasPrefix(e.Version(), "3."), e.Version())
	assert.Equal(t, 200*time.Millisecond, e.Config().TickTime)
	assert.True(t, e.Config().ForceSync)

	t.Run("every member serves and one leads", func(t *testing.T) {
		m := modes(t, e)
		assert.ElementsMatch(t, []string{"leader", "follower", "follower"}, m)
		l, err := e.Leader()
		require.NoError(t, err)
		assert.Equal(t, "leader", m[l])
	})

	t.Run("write on one member, read on another", func(t *testing.T) {
		a, b := connect(t, e.Servers()[0]), connect(t, e.Servers()[1])
		_, err := a.Create("/written-on-0", []byte("hello"), 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		_, err = b.Sync("/written-on-0") // a follower may lag; sync first
		require.NoError(t, err)
		data, _, err := b.Get("/written-on-0")
		require.NoError(t, err)
		assert.Equal(t, "hello", string(data))
	})

	t.Run("mntr", func(t *testing.T) {
		l, err := e.Leader()
		require.NoError(t, err)
		m, err := e.Mntr(l)
		require.NoError(t, err)
		assert.Equal(t, "leader", m["zk_server_state"])
		n, err := m.Int("zk_znode_count")
		require.NoError(t, err)
		assert.Positive(t, n)
		_, err = m.Int("zk_proposal_count")
		assert.NoError(t, err, "the bench counts quorum writes with it")
	})

	t.Run("killing the leader elects another and clients go on", func(t *testing.T) {
		client := connect(t, e.Servers()...)
		old, err := e.Leader()
		require.NoError(t, err)
		pid := e.PID(old)
		require.NoError(t, e.Kill(old))
		assert.False(t, e.Running(old))
		assert.False(t, Alive(pid), "killed JVM reaped")

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		t0 := time.Now()
		require.NoError(t, e.WaitServing(ctx))
		l, err := e.Leader()
		require.NoError(t, err)
		assert.NotEqual(t, old, l)
		t.Logf("new leader %d after %v", l, time.Since(t0).Round(time.Millisecond))

		require.Eventually(t, func() bool {
			_, err := client.Create("/after-leader-kill", []byte("still here"), 0, zk.WorldACL(zk.PermAll))
			return err == nil || errors.Is(err, zk.ErrNodeExists)
		}, 20*time.Second, 50*time.Millisecond, "client can write again")

		require.NoError(t, e.Restart(old))
		assert.True(t, e.Running(old))
		m := modes(t, e)
		assert.Equal(t, "follower", m[old], "the old leader rejoins as a follower: %v", m)
		back := connect(t, e.Servers()[old])
		_, err = back.Sync("/after-leader-kill")
		require.NoError(t, err)
		data, _, err := back.Get("/after-leader-kill")
		require.NoError(t, err)
		assert.Equal(t, "still here", string(data))
	})

	t.Run("stop a follower with SIGTERM and restart it", func(t *testing.T) {
		l, err := e.Leader()
		require.NoError(t, err)
		f := (l + 1) % e.Size()
		require.NoError(t, e.Stop(f))
		assert.Error(t, e.Stop(f), "already stopped")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		assert.NoError(t, e.WaitServing(ctx), "two of three members still serve")
		_, err = ServerStatus(e.Servers()[f])
		assert.Error(t, err, "a stopped member does not answer")
		assert.Error(t, e.Restart(l), "restarting a running member is refused")
		require.NoError(t, e.StartStopped())
		assert.True(t, e.Running(f))
		assert.ElementsMatch(t, []string{"leader", "follower", "follower"}, modes(t, e))
	})

	t.Run("close leaves no JVM", func(t *testing.T) {
		var pids []int
		for _, m := range e.Members() {
			require.NotZero(t, m.PID)
			pids = append(pids, m.PID)
		}
		require.NoError(t, e.Close())
		for _, pid := range pids {
			assert.False(t, Alive(pid), "pid %d still exists after Close", pid)
		}
		_, err := os.Stat(e.Dir())
		assert.True(t, os.IsNotExist(err), "temp dir removed")
		assert.NoError(t, e.Close(), "Close twice")
		assert.ErrorIs(t, e.Kill(0), ErrClosed)
		assert.ErrorIs(t, e.Restart(0), ErrClosed)
	})
}

func TestEnsemblesSideBySide(t *testing.T) {
	// Two ensembles at once in one process, as two test binaries would
	// run them: they must get distinct ports and both work.
	if testing.Short() {
		t.Skip("integration test: starts ZooKeeper; run without -short")
	}
	cfg := DefaultConfig()
	cfg.Size = 1
	type result struct {
		e   *Ensemble
		err error
	}
	ch := make(chan result, 2)
	for range 2 {
		go func() {
			e, err := Start(context.Background(), cfg)
			ch <- result{e, err}
		}()
	}
	var es []*Ensemble
	for range 2 {
		r := <-ch
		if r.e != nil {
			t.Cleanup(func() { r.e.Close() })
			es = append(es, r.e)
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
	}
	a, b := es[0].Members()[0], es[1].Members()[0]
	assert.NotEqual(t, a.Addr, b.Addr)
	assert.NotEqual(t, a.Dir, b.Dir)
	for _, e := range es {
		assert.Equal(t, []string{"standalone"}, modes(t, e))
		c := connect(t, e.Servers()...)
		_, err := c.Create("/mine", nil, 0, zk.WorldACL(zk.PermAll))
		assert.NoError(t, err, "each ensemble has its own tree")
	}
}

func TestNoZooKeeper(t *testing.T) {
	empty := t.TempDir()
	t.Run("ZOOKEEPER_HOME without jars", func(t *testing.T) {
		t.Setenv("ZOOKEEPER_HOME", empty)
		assertNoZooKeeper(t, Config{})
	})
	t.Run("nothing installed", func(t *testing.T) {
		t.Setenv("ZOOKEEPER_HOME", "")
		oldDeb, oldBrew := debianJarDir, homebrewHomes
		debianJarDir, homebrewHomes = empty, []string{empty}
		t.Cleanup(func() { debianJarDir, homebrewHomes = oldDeb, oldBrew })
		assertNoZooKeeper(t, Config{})
	})
	t.Run("Config.Home without jars", func(t *testing.T) {
		assertNoZooKeeper(t, Config{Home: empty})
	})
}

func assertNoZooKeeper(t *testing.T, cfg Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t0 := time.Now()
	e, err := Start(ctx, cfg)
	require.Nil(t, e)
	require.ErrorIs(t, err, ErrNoZooKeeper)
	assert.Less(t, time.Since(t0), time.Second, "fails at once")
	msg := err.Error()
	for _, how := range []string{"make test", "apt-get install zookeeper", "docker compose up -d",
		"ZK_SERVERS=127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183"} {
		assert.Contains(t, msg, how)
	}
	t.Log(msg)
}

func TestStartFailureShowsLogTail(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs java; run without -short")
	}
	cfg := DefaultConfig()
	cfg.Size = 1
	cfg.BaseDir = t.TempDir()
	cfg.JVMFlags = []string{"-XX:+NoSuchFlagForThisTest"}
	e, err := Start(context.Background(), cfg)
	require.Nil(t, e)
	if errors.Is(err, ErrNoZooKeeper) {
		t.Fatal(err)
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited during start-up")
	assert.Contains(t, err.Error(), "NoSuchFlagForThisTest", "the JVM's own complaint is in the error")
	left, _ := os.ReadDir(cfg.BaseDir)
	assert.Empty(t, left, "a failed start removes its directory")
}

// LastJoinsLate: the member with the largest id, started after the
// others have elected, follows; every member serves.
func TestLastJoinsLate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.LastJoinsLate = true
	e := startForTest(t, cfg)
	leader, err := e.Leader()
	require.NoError(t, err)
	assert.NotEqual(t, e.Size()-1, leader, "the member that joined last leads")
	for i, m := range modes(t, e) {
		assert.Contains(t, []string{"leader", "follower"}, m, "member %d", i)
	}
}

// Classpath finds what Start runs, for ZooKeeper's own tools
// (TxnLogToolkit): a server jar and a java, or ErrNoZooKeeper.
func TestClasspath(t *testing.T) {
	jars, java, err := Classpath(Config{})
	if err != nil {
		t.Fatal(err) // with no ZooKeeper: ErrNoZooKeeper's how-to message
	}
	server := false
	for _, j := range jars {
		b := filepath.Base(j)
		server = server || b == "zookeeper.jar" || strings.HasPrefix(b, "zookeeper-3")
	}
	if !server || java == "" {
		t.Errorf("Classpath: no server jar in %v, or no java (%q)", jars, java)
	}
	empty := t.TempDir()
	if _, _, err := Classpath(Config{Home: empty}); !errors.Is(err, ErrNoZooKeeper) {
		t.Errorf("Classpath of an empty Home: %v, want ErrNoZooKeeper", err)
	}
}
