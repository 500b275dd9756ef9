//go:build unix

package timeout_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/timeout"
)

// The hog test runs the holder in a child process, this test binary run
// again with hogChild set, because GOMAXPROCS and a CPU hog act on a whole
// process: the parent's waiter must not share the holder's starved
// scheduler.
const (
	hogChild   = "TIMEOUT_HOG_CHILD" // the lock path
	hogWorkers = 4                   // goroutines that spin for ever
	hogRounds  = 3
)

// hogMsg is a line the child writes on its stdout.
type hogMsg struct {
	Locked     bool   `json:"locked,omitempty"`
	GaveUpUnix int64  `json:"gave_up_unix_ns,omitempty"`
	Err        string `json:"err,omitempty"`
}

// A holder that runs on one processor beside goroutines that never yield
// (GOMAXPROCS=1 and a CPU hog, the worst a busy service does to its
// timers) still gives its hold up before a waiter can evict it, at the
// shortest lease, where it keeps only the margin's floor in hand. The
// holder is cut off silently, so nothing but its own timer tells it; its
// Done is read by a goroutine of the starved process, as a user's code
// would read it. Both times come from the same machine's clock.
func TestSilencedHolderUnderACPUHogGivesUpBeforeEviction(t *testing.T) {
	if path := os.Getenv(hogChild); path != "" {
		os.Exit(runHogChild(t, path))
	}
	servers := strings.Join(zktest.Servers(t), ",")
	raw := zktest.Connect(t)
	for round := range hogRounds {
		path := zktest.LockPath(t)
		child, locked, msgs := startHogChild(t, servers, path)
		require.NoError(t, <-locked, "round %d: the child holder", round)

		b := newMutex(t, zktest.Connect(t), path, timeout.WithLease(timeout.MinLease))
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		t.Cleanup(cancel) // a failed round must not leave the waiter waiting
		type outcome struct {
			at  time.Time
			err error
		}
		gotIt := make(chan outcome, 1) // the goroutine never touches t
		go func() {
			err := b.Lock(ctx)
			gotIt <- outcome{time.Now(), err}
		}()
		waitChildren(t, raw, path, 2)
		_, err := fmt.Fprintln(child, "silence")
		require.NoError(t, err)

		var gaveUp time.Time
		select {
		case m := <-msgs:
			require.Empty(t, m.Err, "round %d: the child holder", round)
			gaveUp = time.Unix(0, m.GaveUpUnix)
		case <-ctx.Done():
			t.Fatalf("round %d: the silenced holder's Done did not close within %v", round, wait)
		}
		got := <-gotIt
		require.NoError(t, got.err, "round %d: the waiter", round)
		held := got.at
		t.Logf("round %d: the holder gave up %v before the waiter held (lease %v)",
			round, held.Sub(gaveUp).Round(100*time.Microsecond), timeout.MinLease)
		require.True(t, gaveUp.Before(held), "round %d: the starved holder still believed %v after the waiter held", round, gaveUp.Sub(held))
		require.NoError(t, b.Unlock(context.Background()))
		cancel()
	}
}

// startHogChild starts the child holder on path and returns its stdin,
// the outcome of its Lock, and its later messages.
func startHogChild(t *testing.T, servers, path string) (stdin *os.File, locked <-chan error, msgs <-chan hogMsg) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSilencedHolderUnderACPUHogGivesUpBeforeEviction$")
	cmd.Env = append(os.Environ(), hogChild+"="+path, "ZK_SERVERS="+servers, "GOMAXPROCS=1")
	cmd.Stderr = os.Stderr
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdin = inR
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	_ = inR.Close()
	t.Cleanup(func() {
		_ = inW.Close() // the child exits when its stdin closes
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lockedCh, msgCh := make(chan error, 2), make(chan hogMsg, 1)
	go func() {
		defer func() { lockedCh <- fmt.Errorf("the child exited") }()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var m hogMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				// The child's test framework: its reason, should it fail.
				fmt.Fprintf(os.Stderr, "hog child: %s\n", sc.Bytes())
				continue
			}
			switch {
			case m.Locked:
				lockedCh <- nil
			default:
				msgCh <- m
			}
		}
	}()
	return inW, lockedCh, msgCh
}

// runHogChild is the holder: on one processor beside hogWorkers spinning
// goroutines, it takes the lock at the shortest lease, says so, waits for
// the word to go silent, and reports when it saw its Done close.
func runHogChild(t *testing.T, path string) int {
	out := json.NewEncoder(os.Stdout)
	fail := func(err error) int { _ = out.Encode(hogMsg{Err: err.Error()}); return 1 }
	if n := runtime.GOMAXPROCS(0); n != 1 {
		return fail(fmt.Errorf("GOMAXPROCS is %d, want 1", n))
	}
	for range hogWorkers {
		go func() {
			for { // the runtime preempts it every 10ms or so
			}
		}()
	}
	cut := zktest.NewCutter()
	conn := zktest.Connect(t, zktest.WithDialer(cut.Dialer()), zktest.WithSessionTimeout(4*time.Second))
	m, err := timeout.New(zktest.Session(t, conn), path, timeout.WithLease(timeout.MinLease))
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := m.Lock(ctx); err != nil {
		return fail(err)
	}
	_ = out.Encode(hogMsg{Locked: true})
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		return 0 // the parent went away
	}
	cut.Silence()
	select {
	case <-m.Done():
		_ = out.Encode(hogMsg{GaveUpUnix: time.Now().UnixNano()})
	case <-ctx.Done():
		return fail(fmt.Errorf("Done did not close within %v of the silence", wait))
	}
	in.Scan() // hold the session until the parent is done with us
	return 0
}
