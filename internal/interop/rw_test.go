package interop

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/history"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/rwlock"
)

// The read-write lock with the real clients' read-write locks on one
// path: Curator's InterProcessReadWriteLock and kazoo's ReadLock and
// WriteLock. Each client runs rwReaders readers and rwWriters writers.
const (
	rwReaders   = 2
	rwWriters   = 1
	rwPeerHolds = 40 // per peer contender
	stuckAfter  = 5 * time.Second
)

// kazoo's patterns that make it see Curator's names, which are ours too:
// its reader must take __WRIT__ for a writer, its writer both kinds.
const (
	kazooReaderPatterns = "__WRIT__"
	kazooWriterPatterns = "__READ__,__WRIT__"
)

// rwPeer is a peer's read-write driver with its readers and writers.
type rwPeer struct {
	peer
	client           string // the contenders' names start with it
	readers, writers int
}

func curatorRW(readers, writers int) rwPeer {
	return rwPeer{peer{name: "curator", command: func(t *testing.T, servers, path string, _, holds int, hold time.Duration) *exec.Cmd {
		return exec.Command("java", "-cp", curatorClasspath(t), "RWLockDriver", servers, path,
			strconv.Itoa(readers), strconv.Itoa(writers), strconv.Itoa(holds),
			strconv.FormatInt(hold.Milliseconds(), 10), strconv.FormatInt(stuckAfter.Milliseconds(), 10))
	}}, "curator", readers, writers}
}

func kazooRW(patterns bool, readers, writers int) rwPeer {
	name := fmt.Sprintf("kazoo(%dr+%dw)", readers, writers)
	if patterns {
		name += "+extra_lock_patterns"
	}
	return rwPeer{peer{name: name, command: func(t *testing.T, servers, path string, _, holds int, hold time.Duration) *exec.Cmd {
		if err := exec.Command(debianPython, "-c", "import kazoo").Run(); err != nil {
			t.Fatalf("kazoo is not installed for %s (%v): %s", debianPython, err, installHint)
		}
		args := []string{filepath.Join(root(t), "bench/peers/kazoo/rw_driver.py"),
			"--servers", servers, "--path", path,
			"--readers", strconv.Itoa(readers), "--writers", strconv.Itoa(writers),
			"--holds", strconv.Itoa(holds), "--hold-ms", strconv.FormatFloat(float64(hold)/float64(time.Millisecond), 'f', 3, 64),
			"--timeout-s", strconv.FormatFloat(stuckAfter.Seconds(), 'f', 1, 64)}
		if patterns {
			args = append(args, "--reader-patterns="+kazooReaderPatterns, "--writer-patterns="+kazooWriterPatterns)
		}
		return exec.Command(debianPython, args...)
	}}, "kazoo", readers, writers}
}

// TestMixedReadWriteClients checks one timeline of readers and writers
// of several clients on one path: no writer overlaps anything, readers
// overlap only readers. Our lock with Curator's, and with kazoo's told to
// see our names, must be clean. The mixes that are not safe run too, and
// their overlaps are logged: Curator's reader takes kazoo's writers for
// readers, kazoo's defaults do not see our nodes. kazoo 2.8's reader can
// wait for a writer behind it (kazoo #649): its contenders that gave up
// after stuckAfter are counted, and kazoo's writers are also run without
// its readers, so that our lock meets several hundred of their holds.
func TestMixedReadWriteClients(t *testing.T) {
	servers := strings.Join(zktest.Servers(t), ",")
	for _, p := range []rwPeer{curatorRW(2, 1), kazooRW(true, 0, 2), kazooRW(true, 2, 1)} {
		t.Run("rwlock+"+p.name, func(t *testing.T) {
			r := mixRW(t, servers, true, p)
			if n := history.Overlaps(r.h); n != 0 {
				t.Errorf("%d holds conflict in %d:\n%v", n, len(r.h), history.Check(r.h))
			}
			t.Logf("rwlock with %s: %s", p.name, r)
		})
	}
	t.Run("unsafe", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			ours  bool
			peers []rwPeer
		}{
			{"rwlock+curator+kazoo+extra_lock_patterns", true, []rwPeer{curatorRW(2, 1), kazooRW(true, 0, 2)}},
			{"rwlock+kazoo (default patterns)", true, []rwPeer{kazooRW(false, 2, 1)}},
			{"curator+kazoo (default patterns)", false, []rwPeer{curatorRW(2, 1), kazooRW(false, 0, 2)}},
			{"kazoo alone", false, []rwPeer{kazooRW(false, 2, 1)}},
		} {
			r := mixRW(t, servers, c.ours, c.peers...)
			t.Logf("%s: %s (not safe, as documented)", c.name, r)
		}
	})
}

// rwRun is what one mix of clients did.
type rwRun struct {
	h     history.History
	stuck []string // peer contenders that gave up, waiting longer than stuckAfter
}

func (r rwRun) String() string {
	readers := 0
	for _, x := range r.h {
		if x.Shared {
			readers++
		}
	}
	return fmt.Sprintf("%d holds (%d reads), %d in conflict, stuck: %v", len(r.h), readers, history.Overlaps(r.h), r.stuck)
}

// mixRW runs the peers' drivers and, with ours, rwReaders readers and
// rwWriters writers of rwlock on one new path until the peers are done.
func mixRW(t *testing.T, servers string, ours bool, peers ...rwPeer) rwRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path := zktest.LockPath(t)
	base := time.Now().UnixNano()
	at := func(ns int64) time.Duration { return time.Duration(ns - base) }

	var waits []func() ([]peerHold, error)
	for _, p := range peers {
		ready, wait := runPeer(t, ctx, p.peer, servers, path, p.readers+p.writers, rwPeerHolds, holdFor)
		select {
		case <-ready:
		case <-ctx.Done():
			t.Fatalf("%s driver never got its sessions", p.name)
		}
		waits = append(waits, wait)
	}

	var mu sync.Mutex
	var run rwRun
	record := func(x history.Hold) {
		mu.Lock()
		run.h = append(run.h, x)
		mu.Unlock()
	}
	peersDone := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; ours && i < rwReaders+rwWriters; i++ {
		m, err := rwlock.New(zktest.Connected(t), path)
		if err != nil {
			t.Fatal(err)
		}
		read := i < rwReaders
		s, name := m.Writer(), fmt.Sprintf("rwlock-w%d", i)
		if read {
			s, name = m.Reader(), fmt.Sprintf("rwlock-r%d", i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-peersDone:
					return
				default:
				}
				if err := s.Lock(ctx); err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				enter := time.Now().UnixNano()
				time.Sleep(holdFor)
				record(history.Hold{Holder: name, Enter: at(enter), Exit: at(time.Now().UnixNano()), Shared: read})
				if err := s.Unlock(ctx); err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
			}
		}()
	}
	for i, wait := range waits {
		holds, err := wait()
		if err != nil {
			t.Error(err)
		}
		count := map[string]int{}
		for _, ph := range holds {
			count[ph.holder]++
			record(history.Hold{Holder: ph.holder, Enter: at(ph.acquired), Exit: at(ph.release), Shared: strings.Contains(ph.holder, "-r")})
		}
		p := peers[i]
		for j := range p.readers + p.writers {
			kind := "w"
			if j < p.readers {
				kind = "r"
			}
			holder := fmt.Sprintf("%s-%s%d", p.client, kind, j)
			if n := count[holder]; n < rwPeerHolds {
				run.stuck = append(run.stuck, fmt.Sprintf("%s after %d holds", holder, n))
			}
		}
	}
	close(peersDone)
	wg.Wait()
	return run
}
