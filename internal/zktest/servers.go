package zktest

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/ensemble"
)

// startTimeout bounds the start of the shared local ensemble.
const startTimeout = 2 * time.Minute

var local struct {
	mu      sync.Mutex
	started bool // a start was attempted; err holds its failure
	closed  bool
	e       *ensemble.Ensemble
	err     error
	took    time.Duration
	// exported is the ZK_SERVERS value MainWithExamples set for the local
	// ensemble, "" when it set none.
	exported string
}

// Main is the TestMain of every package that talks to ZooKeeper: it runs
// the tests and then closes the local ensemble, if one was started.
func Main(m *testing.M) {
	code := m.Run()
	closeLocal()
	os.Exit(code)
}

func closeLocal() {
	local.mu.Lock()
	defer local.mu.Unlock()
	local.closed = true
	if local.e != nil {
		local.e.Close()
		local.e = nil
	}
}

// Servers returns the client addresses of the ensemble the tests use:
// ZK_SERVERS (comma-separated) when set, else a local 3-node ensemble
// started once per test binary, on first use (this call then blocks for
// the few seconds the start takes). Under go test -short it skips the test.
// It fails the test, never skips it, when no ZooKeeper can be found (the
// message says how to get one) or the ensemble fails to start; after a
// failed start every later call in the binary fails at once with the same
// error.
func Servers(t testing.TB) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs ZooKeeper; run without -short")
	}
	if s := external(); s != nil {
		return s
	}
	return localEnsemble(t).Servers()
}

// Ensemble returns the local ensemble, for fault tests that stop, kill or
// restart members. Members that the test leaves stopped are restarted when
// the test ends, so later tests in the binary see a whole ensemble. When
// ZK_SERVERS is set it skips the test: an external ensemble can not be
// killed from here.
func Ensemble(t testing.TB) *ensemble.Ensemble {
	t.Helper()
	skipUnlessLocal(t, "fault test needs a local ensemble it can kill")
	e := localEnsemble(t)
	t.Cleanup(func() {
		if err := e.StartStopped(); err != nil && !errors.Is(err, ensemble.ErrClosed) {
			t.Errorf("zktest: restarting the members this test stopped: %v", err)
		}
	})
	return e
}

// PrivateEnsemble starts a local ensemble for t alone, and closes it when
// t ends. It is for tests that count the servers' work (mntr) exactly, and
// so must not see what the binary's other tests leave behind on the shared
// ensemble: sessions still closing, or the server's removal of their empty
// lock paths (containers, swept once a minute, tens at a time). Connect to
// it with WithServers(e.Servers()). It skips the test under -short and
// when ZK_SERVERS is set, like Ensemble, and costs the few seconds of a
// start. Each configure changes the default configuration first (say, to
// proxy the links between members: ensemble.Config.ProxiedLinks).
func PrivateEnsemble(t testing.TB, configure ...func(*ensemble.Config)) *ensemble.Ensemble {
	t.Helper()
	skipUnlessLocal(t, "needs a local ensemble of its own, with no other traffic")
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cfg := ensemble.DefaultConfig()
	for _, c := range configure {
		c(&cfg)
	}
	e, err := ensemble.Start(ctx, cfg)
	switch {
	case errors.Is(err, ensemble.ErrNoZooKeeper):
		t.Fatal(err.Error())
	case err != nil:
		t.Fatalf("zktest: a private ZooKeeper ensemble failed to start: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("zktest: closing the private ensemble: %v", err)
		}
	})
	return e
}

// skipUnlessLocal skips t under -short, and when ZK_SERVERS points the
// tests at an ensemble this binary can not start, stop or watch alone.
func skipUnlessLocal(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs ZooKeeper; run without -short")
	}
	if external() != nil {
		t.Skip(why + "; unset ZK_SERVERS")
	}
}

// external parses ZK_SERVERS; nil when it is unset or blank, or names the
// local ensemble (MainWithExamples set it so).
func external() []string {
	env := os.Getenv("ZK_SERVERS")
	local.mu.Lock()
	ours := local.exported != "" && env == local.exported
	local.mu.Unlock()
	if ours {
		return nil
	}
	var out []string
	for _, s := range strings.Split(env, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func localEnsemble(t testing.TB) *ensemble.Ensemble {
	t.Helper()
	e, startedNow, err := startLocal()
	if startedNow {
		t.Logf("zktest: started a local %d-node ZooKeeper %s ensemble in %v: %s",
			e.Size(), e.Version(), local.took.Round(time.Millisecond), e.ConnectString())
	}
	switch {
	case errors.Is(err, ensemble.ErrNoZooKeeper), errors.Is(err, errLocalClosed):
		t.Fatal(err.Error())
	case err != nil:
		t.Fatalf("zktest: the local ZooKeeper ensemble failed to start (not retried in this test binary): %v", err)
	}
	return e
}

var errLocalClosed = errors.New("zktest: the local ensemble is closed (Main has returned)")

// startLocal returns the local ensemble, starting it on the first call;
// startedNow is true for the call that started it. A failed start is not
// retried: every later call returns its error.
func startLocal() (e *ensemble.Ensemble, startedNow bool, err error) {
	local.mu.Lock()
	defer local.mu.Unlock()
	if local.closed {
		return nil, false, errLocalClosed
	}
	if !local.started {
		local.started = true
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		t0 := time.Now()
		local.e, local.err = ensemble.Start(ctx, ensemble.DefaultConfig())
		local.took = time.Since(t0)
		cancel()
		startedNow = local.err == nil
	}
	return local.e, startedNow, local.err
}
