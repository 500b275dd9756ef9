package interop

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/history"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/sequential"
	"github.com/zklocks/zklocks/timeout"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// ours is a lock of this module, as the test runs it.
type ours struct {
	name string
	make func(conn *zk.Conn, path string, i int) (zklocks.Locker, func(context.Context) context.Context, error)
}

var variants = []ours{
	{"sequential", func(conn *zk.Conn, path string, _ int) (zklocks.Locker, func(context.Context) context.Context, error) {
		m, err := sequential.New(session(conn), path)
		return m, nil, err
	}},
	{"reentrant", func(conn *zk.Conn, path string, i int) (zklocks.Locker, func(context.Context) context.Context, error) {
		m, err := reentrant.New(session(conn), path)
		owner := fmt.Sprintf("interop-%d", i)
		return m, func(ctx context.Context) context.Context { return reentrant.WithOwner(ctx, owner) }, err
	}},
	{"timeout", func(conn *zk.Conn, path string, _ int) (zklocks.Locker, func(context.Context) context.Context, error) {
		m, err := timeout.New(session(conn), path, timeout.WithLease(time.Second))
		return m, nil, err
	}},
}

// session is conn's zklocks.Session (zktest's connections have its
// default timeout).
func session(conn *zk.Conn) *zklocks.Session {
	s, err := zklocks.NewSession(conn, zklocks.WithSessionTimeout(zktest.DefaultSessionTimeout))
	if err != nil {
		panic(err)
	}
	return s
}

const (
	contenders = 2                    // per client
	peerHolds  = 75                   // per peer contender: 150 holds of the peer per pair
	holdFor    = 2 * time.Millisecond // inside the lock
)

// The clients on one path: every lock of this module with Curator, and
// with kazoo told to see our nodes, must never overlap (several hundred
// holds per pair). The pairs that are not safe run as well, briefly, and
// their overlaps are logged, not hidden: kazoo's default Lock does not see
// our nodes, and Curator and kazoo do not see each other's.
func TestMixedClients(t *testing.T) {
	servers := strings.Join(zktest.Servers(t), ",")
	safe := []peer{curatorPeer(), kazooPeer(true)}
	for _, v := range variants {
		for _, p := range safe {
			t.Run(v.name+"+"+p.name, func(t *testing.T) {
				h := mix(t, servers, &v, p, nil)
				if n := history.Overlaps(h); n != 0 {
					t.Errorf("%d double holders in %d holds:\n%v", n, len(h), history.Check(h))
				}
				t.Logf("%s with %s: %d holds, %d double holders", v.name, p.name, len(h), history.Overlaps(h))
			})
		}
	}
	t.Run("unsafe", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			v     *ours
			p, p2 peer
		}{
			{"sequential+kazoo (default patterns)", &variants[0], kazooPeer(false), peer{}},
			{"curator+kazoo (default patterns)", nil, curatorPeer(), kazooPeer(false)},
		} {
			h := mix(t, servers, c.v, c.p, &c.p2)
			t.Logf("%s: %d holds, %d double holders (not safe, as documented)", c.name, len(h), history.Overlaps(h))
		}
	})
}

// mix runs contenders of v (if not nil) and of peers p and p2 (if named)
// on one new path until the peers are done, and returns the merged history.
func mix(t *testing.T, servers string, v *ours, p peer, p2 *peer) history.History {
	t.Helper()
	return mixAt(t, servers, zktest.LockPath(t), v, p, p2)
}

// mixAt is mix on the given path.
func mixAt(t *testing.T, servers, path string, v *ours, p peer, p2 *peer) history.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := time.Now().UnixNano()
	at := func(ns int64) time.Duration { return time.Duration(ns - base) }

	var waits []func() ([]peerHold, error)
	for _, q := range []*peer{&p, p2} {
		if q == nil || q.command == nil {
			continue
		}
		ready, wait := runPeer(t, ctx, *q, servers, path, contenders, peerHolds, holdFor)
		select {
		case <-ready:
		case <-ctx.Done():
			t.Fatalf("%s driver never got its sessions", q.name)
		}
		waits = append(waits, wait)
	}

	var mu sync.Mutex
	var h history.History
	peersDone := make(chan struct{})
	var wg sync.WaitGroup
	if v != nil {
		for i := range contenders {
			conn := zktest.Connect(t)
			l, withOwner, err := v.make(conn, path, i)
			if err != nil {
				t.Fatal(err)
			}
			if withOwner == nil {
				withOwner = func(ctx context.Context) context.Context { return ctx }
			}
			name := fmt.Sprintf("%s-%d", v.name, i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				lctx := withOwner(ctx)
				for {
					select {
					case <-peersDone:
						return
					default:
					}
					if err := l.Lock(lctx); err != nil {
						t.Errorf("%s: Lock: %v", name, err)
						return
					}
					enter := time.Now().UnixNano()
					time.Sleep(holdFor)
					exit := time.Now().UnixNano()
					mu.Lock()
					h = append(h, history.Hold{Holder: name, Enter: at(enter), Exit: at(exit)})
					mu.Unlock()
					if err := l.Unlock(lctx); err != nil {
						t.Errorf("%s: Unlock: %v", name, err)
						return
					}
				}
			}()
		}
	}
	var theirs history.History
	for _, wait := range waits {
		holds, err := wait()
		if err != nil {
			t.Error(err)
		}
		for _, ph := range holds {
			theirs = append(theirs, history.Hold{Holder: ph.holder, Enter: at(ph.acquired), Exit: at(ph.release)})
		}
	}
	close(peersDone)
	wg.Wait()
	return append(h, theirs...)
}
