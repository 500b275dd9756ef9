package main

// The herd demo's engine. N contenders, each with its own session, take
// one lock in turns; playHerd moves them one handoff at a time and
// counts, for every release, whom it woke: from the watch events that
// reached each contender's session, from the locks' own Stats, and from
// the servers (4lw wchc before the release, mntr around it).
//
// The handoffs are serialised so that every count belongs to one release:
// before the holder lets go, every waiter's watch must be in place on the
// servers (settle, in demo_herd_watch.go). Without that, a release could
// find a woken waiter still on its way back to its watch, which would
// miss the release, and the counts would depend on timing.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	zkl "github.com/zklocks/zklocks"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/zklocks/zklocks/bench"
	"github.com/zklocks/zklocks/internal/zkop"
)

// herdConfig says what playHerd runs.
type herdConfig struct {
	Servers      []string
	Variant      string // a name in herdVariants
	Contenders   int    // at least 1
	Acquisitions int    // Lock calls in all; every one is released
	Hold         time.Duration
	Session      time.Duration
	// Report, when not nil, is called with the state before the first
	// release (Round 0) and after every handoff.
	Report func(herdRelease)
}

// herdRelease is one handoff: a release and the acquisition it led to.
// Contenders are numbered from 0 (the demo prints c1 for 0).
type herdRelease struct {
	Round    int // from 1; 0 for the state before the first release
	Releaser int
	// Waiting is who waited when the lock was released, in queue order
	// (the node order for the sequential lock, by number for naive).
	Waiting []int
	// Woken is who of Waiting received a watch event during the handoff.
	Woken []int
	// OwnEvents counts the watch events the releaser received while it
	// released: its own node's watch (the one behind Done), fired by its
	// own delete. It wakes nobody.
	OwnEvents int64
	// Events counts the watch events that reached all the contenders'
	// sessions during the handoff, OwnEvents included; Notifications is
	// what the locks counted themselves (Stats), which leave out the
	// own-node event: they stop listening before they delete their node.
	Events, Notifications int64
	// Watching is how many of the contenders' sessions the servers listed
	// (4lw wchc) as watching the released node just before the release.
	Watching int
	// Holder is who holds the lock after the handoff, -1 when nobody does;
	// Queue is who waits then.
	Holder int
	Queue  []int
	// Server is what the servers counted during the handoff (mntr).
	Server bench.ServerCounts
	// TotalEvents and TotalWrites are running totals since the first Lock:
	// watch events received, and the leader's proposals (quorum writes).
	TotalEvents, TotalWrites int64
}

// herdSummary is a whole run.
type herdSummary struct {
	Variant    string
	Contenders int
	Path       string // the lock path
	Releases   []herdRelease
	// Events and Notifications are the run's totals (see herdRelease).
	Events, Notifications int64
	// Server is what the servers counted from before the first Lock to
	// after the last release.
	Server bench.ServerCounts
}

// herdContender is one contender: a session, its lock, and the goroutine
// that calls Lock and Unlock when told to.
type herdContender struct {
	id      int
	conn    *zkl.Session
	sid     string // the session id as wchc prints it
	lock    herdLock
	events  atomic.Int64 // watch events that reached the session
	cmds    chan herdCmd
	session time.Duration
}

type herdCmd int

const (
	cmdLock herdCmd = iota
	cmdUnlock
	cmdUnlockRelock // Unlock, then Lock again at once
)

// herdMsg is a contender's answer: a Lock or an Unlock returned.
type herdMsg struct {
	id       int
	acquired bool  // Lock returned; otherwise Unlock did
	own      int64 // for Unlock: events received while it ran
	err      error
}

func (c *herdContender) loop(ctx context.Context, msgs chan<- herdMsg) {
	for cmd := range c.cmds {
		if cmd != cmdLock {
			before := c.events.Load()
			err := c.unlock(ctx)
			// Our own node's watch event arrives before the delete's answer
			// on the same connection, so it is counted by now.
			msgs <- herdMsg{id: c.id, own: c.events.Load() - before, err: err}
			if cmd == cmdUnlock {
				continue
			}
		}
		msgs <- herdMsg{id: c.id, acquired: true, err: c.lock.Lock(ctx)}
	}
	_ = c.unlock(ctx) // whatever is still held when the run ends; ErrNotLocked otherwise
}

// unlock releases with a bound of its own: it also runs after ctx ended.
func (c *herdContender) unlock(ctx context.Context) error {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.session)
	defer cancel()
	return c.lock.Unlock(uctx)
}

// connectCounting opens a session that counts the watch events reaching
// it. go-zookeeper hands every event it decodes to the callback before
// any watcher sees it, whether a lock still listens or not.
func connectCounting(ctx context.Context, addrs []string, timeout time.Duration, count *atomic.Int64) (*zkl.Session, error) {
	cb := func(ev zk.Event) {
		switch ev.Type {
		case zk.EventNodeCreated, zk.EventNodeDeleted, zk.EventNodeDataChanged, zk.EventNodeChildrenChanged:
			count.Add(1)
		}
	}
	return connect(ctx, addrs, timeout, zk.WithEventCallback(cb))
}

// herdRun is one run in progress.
type herdRun struct {
	cfg    herdConfig
	v      herdVariant
	path   string
	cs     []*herdContender
	msgs   chan herdMsg
	wg     sync.WaitGroup
	cancel context.CancelFunc

	issued  int          // Lock calls made so far
	holder  int          // -1: nobody
	waiting map[int]bool // Lock called, not returned
}

// playHerd runs the demo and returns its counts. When ctx ends early it
// returns the handoffs done so far with ctx's error. It leaves nothing on
// the ensemble but the parent /zklocks-demo.
func playHerd(ctx context.Context, cfg herdConfig) (herdSummary, error) {
	v, err := lookupHerdVariant(cfg.Variant)
	if err != nil {
		return herdSummary{}, err
	}
	admin, err := connect(ctx, cfg.Servers, cfg.Session)
	if err != nil {
		return herdSummary{}, err
	}
	defer admin.Close()
	path, cleanup, err := prepareHerdPath(ctx, admin.Conn(), v)
	if err != nil {
		return herdSummary{}, err
	}
	defer cleanup()
	r := &herdRun{cfg: cfg, v: v, path: path, holder: -1, waiting: map[int]bool{},
		msgs: make(chan herdMsg, 2*cfg.Contenders)}
	if err := r.start(ctx); err != nil {
		return herdSummary{}, err
	}
	defer r.stop()
	return r.play(ctx)
}

// start connects the contenders and starts their goroutines.
func (r *herdRun) start(ctx context.Context) error {
	r.cs = make([]*herdContender, r.cfg.Contenders)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range r.cs {
		c := &herdContender{id: i, cmds: make(chan herdCmd, 1), session: r.cfg.Session}
		r.cs[i] = c
		g.Go(func() error {
			conn, err := connectCounting(gctx, r.cfg.Servers, r.cfg.Session, &c.events)
			if err != nil {
				return err
			}
			c.conn, c.sid = conn, fmt.Sprintf("0x%x", conn.ID())
			c.lock, err = r.v.newLock(conn, r.path)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		r.closeConns()
		return err
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	for _, c := range r.cs {
		r.wg.Add(1)
		go func() { defer r.wg.Done(); c.loop(lctx, r.msgs) }()
	}
	return nil
}

// stop ends every Lock under way, releases what is held, and closes the
// sessions.
func (r *herdRun) stop() {
	r.cancel()
	for _, c := range r.cs {
		close(c.cmds)
	}
	r.wg.Wait()
	r.closeConns()
}

func (r *herdRun) closeConns() {
	for _, c := range r.cs {
		if c != nil && c.conn != nil {
			c.conn.Close()
		}
	}
}

// play runs the handoffs. When it stops early (ctx ended, an error) the
// summary covers the handoffs completed.
func (r *herdRun) play(ctx context.Context) (sum herdSummary, err error) {
	sum = herdSummary{Variant: r.v.name, Contenders: len(r.cs), Path: r.path}
	base, err := r.settle(ctx)
	if err != nil {
		return sum, err
	}
	last := base
	defer func() { // named results: the totals reach early returns too
		sum.Events, sum.Notifications = last.totalEvents(), last.totalNotifications()
		sum.Server, _ = last.server.Since(base.server)
	}()
	// The first contender takes the lock alone, then the others queue up,
	// in their order where the lock has a queue, so it is easy to follow.
	r.lock(0)
	if _, err := r.handoff(ctx, -1); err != nil {
		return sum, err
	}
	for i := 1; i < len(r.cs) && r.issued < r.cfg.Acquisitions; i++ {
		r.lock(i)
		if err := r.queued(ctx, i); err != nil {
			return sum, err
		}
	}
	queued, err := r.settle(ctx)
	if err != nil {
		return sum, err
	}
	last = queued
	r.report(herdRelease{Releaser: -1, Holder: last.holder, Queue: last.waiting}, base, last)
	for round := 1; last.holder >= 0; round++ {
		rel, next, err := r.round(ctx, round, last)
		if err != nil {
			return sum, err
		}
		r.report(rel, base, next)
		sum.Releases = append(sum.Releases, rel)
		last = next
	}
	return sum, nil
}

// round lets the holder of prev keep the lock for the hold time, then
// hands it off and reads the run at rest again.
func (r *herdRun) round(ctx context.Context, round int, prev herdState) (herdRelease, herdState, error) {
	if err := zkop.Sleep(ctx, r.cfg.Hold); err != nil {
		return herdRelease{}, prev, err
	}
	own, err := r.handoff(ctx, prev.holder)
	if err != nil {
		return herdRelease{}, prev, err
	}
	next, err := r.settle(ctx)
	if err != nil {
		return herdRelease{}, prev, err
	}
	rel, err := r.record(round, own, prev, next)
	return rel, next, err
}

func (r *herdRun) report(rel herdRelease, base, now herdState) {
	rel.TotalEvents = now.totalEvents()
	if c, err := now.server.Since(base.server); err == nil {
		rel.TotalWrites = c.Proposals
	}
	if r.cfg.Report != nil {
		r.cfg.Report(rel)
	}
}

// lock makes contender i call Lock.
func (r *herdRun) lock(i int) {
	r.issued++
	r.waiting[i] = true
	r.cs[i].cmds <- cmdLock
}

// queued waits until contender i has its node in the queue, if the lock
// has one (its Lock call is under way, so this polls the Mutex, not the
// ensemble).
func (r *herdRun) queued(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, handoffTimeout)
	defer cancel()
	for {
		if n, ok := ownNode(r.cs[i].lock); !ok || n != "" {
			return nil
		}
		if err := zkop.Sleep(ctx, time.Millisecond); err != nil {
			return fmt.Errorf("c%d never joined the queue: %w", i+1, err)
		}
	}
}

// handoff releases the lock held by h (none when h is -1), making h queue
// again while Lock calls are left, and waits for the release and for the
// acquisition that follows it, if anyone waits. It returns the events h
// received while it released.
func (r *herdRun) handoff(ctx context.Context, h int) (int64, error) {
	released := h < 0
	if h >= 0 {
		cmd := cmdUnlock
		if r.issued < r.cfg.Acquisitions {
			cmd = cmdUnlockRelock
			r.issued++
			r.waiting[h] = true
		}
		r.holder = -1
		r.cs[h].cmds <- cmd
	}
	acquired := len(r.waiting) == 0
	var own int64
	for !released || !acquired {
		m, err := r.next(ctx)
		if err != nil {
			return 0, err
		}
		switch {
		case !m.acquired:
			released, own = true, m.own
		case r.holder >= 0:
			return 0, fmt.Errorf("c%d and c%d both hold the lock", r.holder+1, m.id+1)
		default:
			acquired, r.holder = true, m.id
			delete(r.waiting, m.id)
		}
	}
	return own, nil
}

// handoffTimeout bounds the wait for one Lock or Unlock to return.
const handoffTimeout = 30 * time.Second

func (r *herdRun) next(ctx context.Context) (herdMsg, error) {
	select {
	case m := <-r.msgs:
		if m.err != nil {
			what := "Unlock"
			if m.acquired {
				what = "Lock"
			}
			return m, fmt.Errorf("c%d: %s: %w", m.id+1, what, m.err)
		}
		return m, nil
	case <-ctx.Done():
		return herdMsg{}, ctx.Err()
	case <-time.After(handoffTimeout):
		return herdMsg{}, fmt.Errorf("no handoff within %v", handoffTimeout)
	}
}

// record compares the settled states before and after a handoff.
func (r *herdRun) record(round int, own int64, prev, next herdState) (herdRelease, error) {
	rel := herdRelease{Round: round, Releaser: prev.holder, Waiting: prev.waiting, OwnEvents: own,
		Watching: prev.watching, Holder: next.holder, Queue: next.waiting}
	for _, w := range prev.waiting {
		if next.events[w] > prev.events[w] {
			rel.Woken = append(rel.Woken, w)
		}
	}
	rel.Events = next.totalEvents() - prev.totalEvents()
	rel.Notifications = next.totalNotifications() - prev.totalNotifications()
	var err error
	rel.Server, err = next.server.Since(prev.server)
	return rel, err
}
