package faulttest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/history"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// Session timeouts of the simulated clients: short, so that expiries are
// quick, but at least five of the local ensemble's 200ms ticks.
const (
	sessionTimeout = 2 * time.Second // clients that should keep their sessions
	expiryTimeout  = time.Second     // clients whose session a test lets expire
	// lossSlack is the allowance beyond the session timeout for a lost hold
	// to show in Done, as in internal/locktest.
	lossSlack = time.Second
	// tick is the local ensemble's tick: the servers round session expiry
	// up to a whole tick.
	tick = 200 * time.Millisecond
	// clockSlack allows for reading one machine's clock from two
	// processes (the test and a child, or the test and the servers).
	clockSlack = 20 * time.Millisecond
)

// tape is the clock and the hold log of one test. Times are offsets from
// its start on the monotonic clock.
type tape struct {
	start time.Time
	mu    sync.Mutex
	holds []*holdRec
}

func newTape() *tape { return &tape{start: time.Now()} }

func (tp *tape) now() time.Duration           { return time.Since(tp.start) }
func (tp *tape) at(t time.Time) time.Duration { return t.Sub(tp.start) }

// holdRec is one hold as the holder saw it.
type holdRec struct {
	c     *client
	token int64
	sid   int64         // the holder's session when Lock returned
	enter time.Duration // Lock returned
	exit  time.Duration // Unlock about to be called; stillHeld until then
	done  time.Duration // Done seen closed during the hold; stillHeld if not
}

const stillHeld = history.StillHeld

// enter records that c's Lock has just returned.
func (tp *tape) enter(c *client) *holdRec { return tp.enterAt(c, tp.now()) }

// enterAt records that c's Lock returned at the given time.
func (tp *tape) enterAt(c *client, at time.Duration) *holdRec {
	h := &holdRec{c: c, token: c.l.Token(), sid: c.conn.SessionID(), enter: at, exit: stillHeld, done: stillHeld}
	tp.mu.Lock()
	tp.holds = append(tp.holds, h)
	tp.mu.Unlock()
	return h
}

// leave records that the holder is about to call Unlock; doneAt is when it
// saw Done close (stillHeld if it did not).
func (tp *tape) leave(h *holdRec, doneAt time.Duration) {
	now := tp.now()
	tp.mu.Lock()
	h.exit, h.done = now, min(doneAt, now)
	tp.mu.Unlock()
}

// history returns the holds on path as a history.History, and the
// longest time a holder went on believing it held the lock after the
// servers could have expired its session (see the package doc).
func (tp *tape) history(path string) (history.History, time.Duration) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var out history.History
	var belief time.Duration
	for _, h := range tp.holds {
		if h.c.path != path {
			continue
		}
		end := min(h.exit, h.done)
		if bound, ok := h.c.expiryBound(h.sid, h.enter); ok && bound < end {
			if end != stillHeld {
				belief = max(belief, end-bound)
			}
			end = bound
		}
		out = append(out, history.Hold{Holder: h.c.name, Enter: h.enter, Exit: end, Token: h.token})
	}
	return out, belief
}

// firstEnterAfter returns when the first hold on path began at or after at.
func (tp *tape) firstEnterAfter(path string, at time.Duration) (time.Duration, bool) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	first, ok := time.Duration(0), false
	for _, h := range tp.holds {
		if h.c.path == path && h.enter >= at && (!ok || h.enter < first) {
			first, ok = h.enter, true
		}
	}
	return first, ok
}

// client is one simulated process: its own session and one lock on it.
type client struct {
	name string
	v    *variant
	path string
	conn *zk.Conn
	l    zklocks.Locker
	st   time.Duration
	cut  *zktest.Cutter // nil unless asked for

	mu    sync.Mutex
	sid   int64                   // the session the client has now
	disc  []time.Duration         // when it lost its connection (tape time)
	ended map[int64]time.Duration // session id -> when the client learned it had ended
}

type clientConfig struct {
	st       time.Duration
	cutter   bool
	callback func(zk.Event)
	dialer   zk.Dialer
	acl      []zk.ACL
	servers  []string
}

type clientOpt func(*clientConfig)

func withTimeout(d time.Duration) clientOpt { return func(c *clientConfig) { c.st = d } }
func withCutter() clientOpt                 { return func(c *clientConfig) { c.cutter = true } }
func withDialer(d zk.Dialer) clientOpt      { return func(c *clientConfig) { c.dialer = d } }

// withEventCallback has go-zookeeper call f in its event loop (see
// zktest.Gate).
func withEventCallback(f func(zk.Event)) clientOpt { return func(c *clientConfig) { c.callback = f } }
func withACL(acl []zk.ACL) clientOpt               { return func(c *clientConfig) { c.acl = acl } }

// withServers connects to these members only (default: the test
// ensemble's).
func withServers(s ...string) clientOpt { return func(c *clientConfig) { c.servers = s } }

// newClient opens a session and makes a lock of variant v on path with it.
func newClient(t testing.TB, tp *tape, v *variant, path, name string, opts ...clientOpt) *client {
	t.Helper()
	cfg := clientConfig{st: sessionTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	c := &client{name: name, v: v, path: path, st: cfg.st, ended: map[int64]time.Duration{}}
	events := make(chan zk.Event, 256)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) }) // runs after the connection is closed
	copts := []zktest.ConnOption{zktest.WithSessionTimeout(cfg.st), zktest.WithEvents(events)}
	switch {
	case cfg.cutter:
		c.cut = zktest.NewCutter()
		copts = append(copts, zktest.WithDialer(c.cut.Dialer()))
	case cfg.dialer != nil:
		copts = append(copts, zktest.WithDialer(cfg.dialer))
	}
	if cfg.servers != nil {
		copts = append(copts, zktest.WithServers(cfg.servers))
	}
	if cfg.callback != nil {
		copts = append(copts, zktest.WithEventCallback(cfg.callback))
	}
	c.conn = zktest.Connect(t, copts...)
	c.sid = c.conn.SessionID()
	go c.follow(tp, events, stop)
	l, err := v.make(c.conn, path, cfg.st, cfg.acl)
	if err != nil {
		t.Fatalf("%s: New(%q): %v", v.name, path, err)
	}
	c.l = l
	return c
}

// follow keeps the client's connection and session history.
func (c *client) follow(tp *tape, events <-chan zk.Event, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case ev := <-events:
			if ev.Type != zk.EventSession {
				continue
			}
			now := tp.now()
			c.mu.Lock()
			switch ev.State {
			case zk.StateDisconnected:
				c.disc = append(c.disc, now)
			case zk.StateExpired:
				if _, ok := c.ended[c.sid]; !ok {
					c.ended[c.sid] = now
				}
			case zk.StateHasSession:
				if sid := c.conn.SessionID(); sid != c.sid && sid != 0 {
					if _, ok := c.ended[c.sid]; !ok {
						c.ended[c.sid] = now
					}
					c.sid = sid
				}
			}
			c.mu.Unlock()
		}
	}
}

// expiryBound returns the earliest time the servers can have expired
// session sid, if the client has learned that sid ended: two thirds of
// the session timeout after the last loss of connection before it
// learned so, less half a tick (a follower tells the leader of its
// clients' sessions only in its ping replies, every half tick, so the
// leader's last refresh of the session can be that much older than the
// client's last answer: ZooKeeper 3.8's Leader.lead pings the learners
// every tickTime/2, and Learner.ping answers with the sessions touched
// since) and 50ms for scheduling. Never earlier than from.
func (c *client) expiryBound(sid int64, from time.Duration) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ended, ok := c.ended[sid]
	if !ok {
		return 0, false
	}
	last, found := time.Duration(0), false
	for _, d := range c.disc {
		if d <= ended {
			last, found = d, true
		}
	}
	if !found {
		return 0, false
	}
	return max(from, last+2*c.st/3-tick/2-50*time.Millisecond), true
}

// ctx adds the client's identity for variants that key holds by owner.
func (c *client) ctx(ctx context.Context) context.Context { return c.v.ctx(ctx, c.name) }

func (c *client) sessionEnded(sid int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.ended[sid]
	return ok
}

// lockNodes lists the lock nodes of v on path: the path itself (naive)
// or its children (the queue family).
func lockNodes(conn *zk.Conn, v *variant, path string) ([]string, error) {
	// conn may be served by a follower that has not yet applied a create
	// the client under test has already seen succeed; the sync makes the
	// listing include every write committed before it.
	if _, err := conn.Sync(path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("sync %s: %w", path, err)
	}
	if v.layout == locktest.NodeAtPath {
		ok, _, err := conn.Exists(path)
		if err != nil || !ok {
			return nil, err
		}
		return []string{path}, nil
	}
	kids, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil || !v.nested {
		return kids, err
	}
	var nodes []string // child/node, for the queues under each child
	for _, k := range kids {
		under, _, err := conn.Children(path + "/" + k)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, err
		}
		for _, n := range under {
			nodes = append(nodes, k+"/"+n)
		}
	}
	return nodes, nil
}

// nodesLeft waits up to within for path to have no lock nodes and
// returns how many are left then (0 is the only good answer).
func nodesLeft(t testing.TB, conn *zk.Conn, v *variant, path string, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		nodes, err := lockNodes(conn, v, path)
		if err != nil {
			t.Errorf("listing %s: %v", path, err)
			return -1
		}
		if len(nodes) == 0 || time.Now().After(deadline) {
			if len(nodes) > 0 {
				t.Errorf("%s: %d node(s) left on %s %v after %v", v.name, len(nodes), path, describe(conn, path, nodes, v), within)
			}
			return len(nodes)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// describe names the owner session of each node, for error messages.
func describe(conn *zk.Conn, path string, nodes []string, v *variant) []string {
	var out []string
	for _, n := range nodes {
		p := n
		if v.layout == locktest.ChildrenOfPath {
			p = path + "/" + n
		}
		_, st, err := conn.Get(p)
		if err != nil {
			out = append(out, fmt.Sprintf("%s (%v)", n, err))
			continue
		}
		out = append(out, fmt.Sprintf("%s (owner %#x)", n, st.EphemeralOwner))
	}
	return out
}

// checkHistory checks path's history and returns its figures.
func checkHistory(t testing.TB, tp *tape, v *variant, path string) (holds, double int, belief time.Duration) {
	t.Helper()
	h, belief := tp.history(path)
	if err := history.CheckPermits(h, v.permits); err != nil {
		t.Errorf("%s: history of %d holds on %s: %v", v.name, len(h), path, err)
	}
	if most := history.MostAtOnce(h); v.permits > 1 && most < v.permits {
		t.Errorf("%s: at most %d holders at once in %d holds on %s; the bound of %d was never tested",
			v.name, most, len(h), path, v.permits)
	}
	return len(h), history.Crowded(h, v.permits), belief
}

// report is one FAULTREPORT line (see the package doc).
type report struct {
	fault, variant string
	holds, double  int
	left           int
	recover        time.Duration // -1: not applicable
	belief         time.Duration
	extra          []string
}

func (r report) log(t testing.TB) {
	t.Helper()
	rec := "n/a"
	if r.recover >= 0 {
		rec = r.recover.Round(time.Millisecond).String()
	}
	line := fmt.Sprintf("FAULTREPORT fault=%s variant=%s holds=%d double=%d left=%d recover=%s belief=%s",
		r.fault, r.variant, r.holds, r.double, r.left, rec, r.belief.Round(time.Millisecond))
	if len(r.extra) > 0 {
		line += " " + strings.Join(r.extra, " ")
	}
	t.Log(line)
}

// cycler makes clients take and release their locks in a loop, recording
// every hold on a tape, until stopped.
type cycler struct {
	tp       *tape
	clients  []*client
	hold     time.Duration // time spent inside the lock
	lockWait time.Duration // bound of one Lock call

	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	mu         sync.Mutex
	acquired   []int
	last       []time.Duration // last hold's start per client; -1 before any
	lockErrs   map[string]int
	unlockErrs map[string]int
}

// startCycler starts one goroutine per client; each Lock call is bounded
// by lockWait.
func startCycler(tp *tape, clients []*client, hold, lockWait time.Duration) *cycler {
	cy := &cycler{tp: tp, clients: clients, hold: hold, lockWait: lockWait,
		acquired: make([]int, len(clients)), last: make([]time.Duration, len(clients)),
		lockErrs: map[string]int{}, unlockErrs: map[string]int{}}
	for i := range cy.last {
		cy.last[i] = -1
	}
	cy.ctx, cy.cancel = context.WithCancel(context.Background())
	for i := range clients {
		cy.wg.Add(1)
		go cy.run(i)
	}
	return cy
}

func (cy *cycler) run(i int) {
	defer cy.wg.Done()
	for cy.ctx.Err() == nil {
		if cy.round(i) {
			return
		}
	}
}

// round is one Lock, hold and Unlock of client i; stop is true when the
// cycler has been stopped.
func (cy *cycler) round(i int) (stop bool) {
	c := cy.clients[i]
	lctx, cancel := context.WithTimeout(c.ctx(cy.ctx), cy.lockWait)
	err := c.l.Lock(lctx)
	cancel()
	if err != nil {
		if cy.ctx.Err() != nil {
			return true
		}
		cy.note(cy.lockErrs, c, err)
		select {
		case <-cy.ctx.Done():
			return true
		case <-time.After(50 * time.Millisecond):
		}
		return false
	}
	h := cy.tp.enter(c)
	doneAt := stillHeld
	timer := time.NewTimer(cy.hold)
	select {
	case <-c.l.Done():
		doneAt = cy.tp.now()
	case <-timer.C:
	}
	timer.Stop()
	cy.tp.leave(h, doneAt)
	uctx, cancel := context.WithTimeout(c.ctx(context.Background()), 10*time.Second)
	// ErrLockLost is expected once Done closed, and also when the hold
	// was lost between the last look at Done and this Unlock.
	if err := c.l.Unlock(uctx); err != nil && !errors.Is(err, zklocks.ErrLockLost) {
		cy.note(cy.unlockErrs, c, err)
	}
	cancel()
	cy.mu.Lock()
	cy.acquired[i]++
	cy.last[i] = h.enter
	cy.mu.Unlock()
	return false
}

var numbers = regexp.MustCompile(`0x[0-9a-f]+|[0-9a-f]{32}|\d+`)

// note counts an error, with paths and numbers blanked so alike errors group.
func (cy *cycler) note(m map[string]int, c *client, err error) {
	s := strings.ReplaceAll(err.Error(), c.path, "<path>")
	s = numbers.ReplaceAllString(s, "#")
	cy.mu.Lock()
	m[s]++
	cy.mu.Unlock()
}

func (cy *cycler) stop() {
	cy.cancel()
	cy.wg.Wait()
}

// total returns the number of completed holds.
func (cy *cycler) total() int {
	cy.mu.Lock()
	defer cy.mu.Unlock()
	n := 0
	for _, a := range cy.acquired {
		n += a
	}
	return n
}

// waitAll waits until every client has begun a hold at or after at.
func (cy *cycler) waitAll(t testing.TB, at, within time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		cy.mu.Lock()
		var behind []string
		for i, l := range cy.last {
			if l < at {
				behind = append(behind, cy.clients[i].name)
			}
		}
		cy.mu.Unlock()
		if len(behind) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			t.Errorf("%d client(s) have not acquired the lock within %v of the fault's end: %v", len(behind), within, behind)
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// errorSummary lists the errors seen, most frequent first.
func (cy *cycler) errorSummary() string {
	cy.mu.Lock()
	defer cy.mu.Unlock()
	var parts []string
	for _, m := range []struct {
		what string
		m    map[string]int
	}{{"Lock", cy.lockErrs}, {"Unlock", cy.unlockErrs}} {
		type kv struct {
			k string
			n int
		}
		var kvs []kv
		for k, n := range m.m {
			kvs = append(kvs, kv{k, n})
		}
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].n > kvs[j].n })
		for _, e := range kvs {
			parts = append(parts, fmt.Sprintf("%s %dx: %s", m.what, e.n, e.k))
		}
	}
	return strings.Join(parts, "\n")
}

func (cy *cycler) unlockErrors() int {
	cy.mu.Lock()
	defer cy.mu.Unlock()
	n := 0
	for _, c := range cy.unlockErrs {
		n += c
	}
	return n
}

// testCtx is bounded by d and ends with the test.
func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// forEachVariantInTurn runs fn as a subtest per variant, one after
// another.
func forEachVariantInTurn(t *testing.T, fn func(t *testing.T, v *variant)) {
	t.Helper()
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) { fn(t, v) })
	}
}

// forEachVariant runs fn as a subtest per variant, all at once. The
// subtests wait on the network and on ZooKeeper, not on the CPU, so they
// are not held to go test's -parallel limit (GOMAXPROCS), which would run
// two at a time on a two-core machine.
func forEachVariant(t *testing.T, fn func(t *testing.T, v *variant)) {
	t.Helper()
	var wg sync.WaitGroup
	for _, v := range variants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(v.name, func(t *testing.T) { fn(t, v) })
		}()
	}
	wg.Wait()
}
