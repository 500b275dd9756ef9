package main

// The herd demo's view of the ensemble: the variants it runs, the lock
// path it makes, and settle, which waits until the servers show every
// waiter watching before it reads the counters.

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	zkl "github.com/zklocks/zklocks" // named: the tests have a func zklocks
	"github.com/zklocks/zklocks/bench"
	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/naive"
	"github.com/zklocks/zklocks/sequential"
)

// herdLock is what the demo needs of a lock.
type herdLock interface {
	Lock(ctx context.Context) error
	Unlock(ctx context.Context) error
	Stats() zkl.Stats
}

// herdVariant is a lock recipe the demo can run.
type herdVariant struct {
	name    string
	newLock func(s *zkl.Session, path string) (herdLock, error)
	// queue: the lock path is the parent of the contenders' nodes (made
	// before the run), not the lock node itself.
	queue bool
}

var herdVariants = []herdVariant{
	{name: "naive", newLock: func(s *zkl.Session, path string) (herdLock, error) {
		m, err := naive.New(s, path)
		if err != nil {
			return nil, err
		}
		return m, nil
	}},
	{name: "sequential", queue: true, newLock: func(s *zkl.Session, path string) (herdLock, error) {
		m, err := sequential.New(s, path)
		if err != nil {
			return nil, err
		}
		return m, nil
	}},
}

func herdVariantNames() []string {
	var names []string
	for _, v := range herdVariants {
		names = append(names, v.name)
	}
	return names
}

func lookupHerdVariant(name string) (herdVariant, error) {
	for _, v := range herdVariants {
		if v.name == name {
			return v, nil
		}
	}
	return herdVariant{}, fmt.Errorf("unknown variant %q (have %s)", name, strings.Join(herdVariantNames(), ", "))
}

// ownNode returns the node a contender has in the queue ("" before it is
// created), and false for locks without one node per contender (naive:
// waiters own nothing).
func ownNode(l herdLock) (string, bool) {
	n, ok := l.(interface{ Node() string })
	if !ok {
		return "", false
	}
	return n.Node(), true
}

// prepareHerdPath makes a fresh lock path under /zklocks-demo before the
// run, so that no parent is created (a write) or removed (the server's
// clean-up of an empty container, another write) while the demo counts.
// The function it returns removes it again.
func prepareHerdPath(ctx context.Context, conn *zk.Conn, v herdVariant) (string, func(), error) {
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	base := "/zklocks-demo/herd-" + hex.EncodeToString(suffix[:])
	made := []string{"/zklocks-demo", base}
	if v.queue {
		made = append(made, base+"/lock")
	}
	remove := func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for i := len(made) - 1; i > 0; i-- { // /zklocks-demo stays: other demos use it
			removeWhenEmpty(cctx, conn, made[i])
		}
	}
	for _, p := range made {
		if _, err := conn.Create(p, nil, zk.FlagPersistent, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			remove()
			return "", nil, fmt.Errorf("create %s: %w", p, err)
		}
	}
	return base + "/lock", remove, nil
}

// removeWhenEmpty deletes p once the contenders' closed sessions have
// taken their nodes with them (the member conn talks to may apply the
// session closes a little later than the one that answered them).
func removeWhenEmpty(ctx context.Context, conn *zk.Conn, p string) {
	for {
		_, _ = conn.Sync(p)
		err := conn.Delete(p, -1)
		if !errors.Is(err, zk.ErrNotEmpty) || zkop.Sleep(ctx, 20*time.Millisecond) != nil {
			return
		}
	}
}

// herdState is the run at rest: one holder (or none), every waiter
// watching, counters read.
type herdState struct {
	holder  int
	waiting []int   // in queue order
	events  []int64 // per contender: watch events its session received
	notif   []int64 // per contender: Stats().Notifications
	// watching is how many contenders' sessions the servers list as
	// watching the holder's node.
	watching int
	server   bench.ServerSnapshot
}

func (s herdState) totalEvents() int64        { return sum(s.events) }
func (s herdState) totalNotifications() int64 { return sum(s.notif) }

func sum(xs []int64) int64 {
	var t int64
	for _, x := range xs {
		t += x
	}
	return t
}

// settleTimeout bounds one settle.
const settleTimeout = 30 * time.Second

// settle waits until the run is at rest and reads it. At rest means: every
// member has applied the ensemble's latest transaction (so no watch that a
// past delete fired is still listed), and every waiter's watch is listed
// by the servers (4lw wchc: a woken waiter has re-armed, and counted the
// event that woke it, since go-zookeeper counts before it delivers).
func (r *herdRun) settle(ctx context.Context) (herdState, error) {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	if err := catchUp(ctx, r.cfg.Servers); err != nil {
		return herdState{}, err
	}
	var watches map[string][]string
	for {
		w, err := readWatches(r.cfg.Servers)
		if err != nil {
			return herdState{}, err
		}
		if r.allWatching(w) {
			watches = w
			break
		}
		if err := zkop.Sleep(ctx, 5*time.Millisecond); err != nil {
			return herdState{}, fmt.Errorf("waiting for every waiter's watch (4lw wchc): %w", err)
		}
	}
	st := herdState{holder: r.holder, waiting: r.queue(),
		events: make([]int64, len(r.cs)), notif: make([]int64, len(r.cs))}
	for i, c := range r.cs {
		st.events[i], st.notif[i] = c.events.Load(), c.lock.Stats().Notifications
	}
	if r.holder >= 0 {
		held := r.path
		if n, ok := ownNode(r.cs[r.holder].lock); ok {
			held = n
		}
		for _, c := range r.cs {
			if slices.Contains(watches[c.sid], held) {
				st.watching++
			}
		}
	}
	var err error
	st.server, err = bench.ReadServers(r.cfg.Servers)
	return st, err
}

// allWatching reports whether every waiter watches a node of the lock
// other than its own: the lock node (naive) or its predecessor
// (sequential).
func (r *herdRun) allWatching(watches map[string][]string) bool {
	for w := range r.waiting {
		c := r.cs[w]
		own, hasNode := ownNode(c.lock)
		if hasNode && own == "" {
			return false // not in the queue yet
		}
		ok := slices.ContainsFunc(watches[c.sid], func(p string) bool {
			return p != own && (p == r.path || strings.HasPrefix(p, r.path+"/"))
		})
		if !ok {
			return false
		}
	}
	return true
}

// queue returns the waiters in queue order: by their nodes' sequence
// numbers when they have nodes, else by number.
func (r *herdRun) queue() []int {
	var q []int
	for w := range r.waiting {
		q = append(q, w)
	}
	seq := func(i int) int64 {
		n, _ := ownNode(r.cs[i].lock)
		if len(n) < 10 {
			return 0
		}
		s, _ := strconv.ParseInt(n[len(n)-10:], 10, 64)
		return s
	}
	slices.SortFunc(q, func(a, b int) int {
		if c := cmp.Compare(seq(a), seq(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return q
}

// catchUp waits until every member has applied the newest transaction any
// of them reported at the start.
func catchUp(ctx context.Context, servers []string) error {
	var target int64
	for _, addr := range servers {
		st, err := ensemble.ServerStatus(addr)
		if err != nil {
			return err
		}
		target = max(target, st.Zxid)
	}
	for {
		behind := false
		for _, addr := range servers {
			st, err := ensemble.ServerStatus(addr)
			if err != nil {
				return err
			}
			behind = behind || st.Zxid < target
		}
		if !behind {
			return nil
		}
		if err := zkop.Sleep(ctx, 2*time.Millisecond); err != nil {
			return fmt.Errorf("members catching up: %w", err)
		}
	}
}

// readWatches asks every member for its watches by session (4lw wchc) and
// returns them merged: session id ("0x...") to watched paths. A session
// is connected to one member, which alone lists its watches.
func readWatches(servers []string) (map[string][]string, error) {
	all := map[string][]string{}
	for _, addr := range servers {
		out, err := ensemble.FourLetter(addr, "wchc")
		if err != nil {
			return nil, fmt.Errorf("%w (the herd demo needs the 4lw commands wchc, srvr and mntr)", err)
		}
		parseWchc(out, all)
	}
	return all, nil
}

// parseWchc adds wchc's answer to into: each session id on a line of its
// own, then the paths it watches, one per line, indented.
func parseWchc(out string, into map[string][]string) {
	session := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
		case line[0] == '\t' || line[0] == ' ':
			if session != "" {
				into[session] = append(into[session], strings.TrimSpace(line))
			}
		default:
			session = strings.TrimSpace(line)
		}
	}
}
