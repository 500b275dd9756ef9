package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/history"
)

// Config is one run: one variant, one number of contenders.
type Config struct {
	// Servers are the ensemble's client addresses (host:port). The
	// contenders' sessions are spread over them round-robin, and mntr is
	// read from every one of them.
	Servers []string
	// Variant is the lock under test.
	Variant Variant
	// Contenders is the number of contenders, each with its own session
	// and its own lock object on the same path; default 1.
	Contenders int
	// Acquisitions is the total number of acquisitions, shared by all
	// contenders. When 0, the run lasts Duration instead.
	Acquisitions int
	// Duration bounds a run without Acquisitions; default 3s. Contenders
	// stop asking for the lock once it has passed (waiters already queued
	// still get it once).
	Duration time.Duration
	// Hold is the time a contender keeps the lock (the critical section);
	// default 0.
	Hold time.Duration
	// Idle is the time a contender waits after a release before it asks
	// for the lock again (work outside the critical section); default 0,
	// which puts the releaser's re-queueing requests on the servers at the
	// very moment of the handoff.
	Idle time.Duration
	// Reentries is the number of nested Lock/Unlock pairs a holder makes
	// while it holds the lock, for variants that support re-entry.
	Reentries int
	// Floors, when set, is copied into the Result for the ratios.
	Floors *Floors
	// Acquired, when set, is incremented after every acquisition (for
	// progress displays).
	Acquired *atomic.Int64
	// OnStart and OnStop, when set, are called right before the first
	// contender starts and right after the last one ends (testing.B
	// uses them to time only the contention phase).
	OnStart, OnStop func()
	// Drivers, when set, keeps a driven variant's process (Variant.Driver)
	// alive across the rounds at one N; without it each run starts and
	// ends one.
	Drivers *DriverPool
	// Paths, above zero, makes the run many locks at once: Paths
	// independent lock paths (lock/p0 ... under the run's directory), each
	// with Contenders contenders of its own, so Paths x Contenders
	// sessions in all; contender i takes path i mod Paths. Mutual
	// exclusion is checked path by path. Zero is one lock, as before.
	Paths int
}

// sessions is the number of contenders (and sessions) of the run.
func (c Config) sessions() int { return c.Contenders * max(c.Paths, 1) }

// pathOf is contender i's lock path under lockPath.
func (c Config) pathOf(lockPath string, i int) string {
	if c.Paths <= 0 {
		return lockPath
	}
	return fmt.Sprintf("%s/p%d", lockPath, i%c.Paths)
}

// makeLockPaths creates lockPath and, for a run of many locks, its
// paths (none for a lock whose node is its path itself: naive).
func (c Config) makeLockPaths(admin *zk.Conn, lockPath string) error {
	acl := zk.WorldACL(zk.PermAll)
	if !c.Variant.NodeAtPath || c.Paths > 0 {
		if _, err := admin.Create(lockPath, nil, 0, acl); err != nil {
			return fmt.Errorf("bench: create %s: %w", lockPath, err)
		}
	}
	if c.Variant.NodeAtPath {
		return nil
	}
	var paths []string
	for k := range c.Paths {
		paths = append(paths, fmt.Sprintf("%s/p%d", lockPath, k))
	}
	// A multilock's locks too (path/l0, ...): every lock path of the run
	// is there before it starts, as a long-running program's are after
	// its first acquisitions, and as the Curator driver's are after its
	// warm-up. Left to the contenders, each one's first create under a
	// missing path would fail and be retried inside the measured window
	// (a NoNode error transaction, then the path's own create).
	roots := append([]string{lockPath}, paths...)
	if c.Paths > 0 {
		roots = paths
	}
	for _, root := range roots {
		for i := range c.Variant.Locks {
			paths = append(paths, fmt.Sprintf("%s/l%d", root, i))
		}
	}
	for _, p := range paths {
		if _, err := admin.Create(p, nil, 0, acl); err != nil {
			return fmt.Errorf("bench: create %s: %w", p, err)
		}
	}
	return nil
}

// checkPaths is CheckHistory for each lock path of a run on its own.
func checkPaths(holds []Hold, permits, paths int) error {
	if paths <= 1 {
		return CheckHistory(holds, permits)
	}
	byPath := make([][]Hold, paths)
	for _, h := range holds {
		byPath[h.Contender%paths] = append(byPath[h.Contender%paths], h)
	}
	for k, hs := range byPath {
		if err := CheckHistory(hs, permits); err != nil {
			return fmt.Errorf("path p%d: %w", k, err)
		}
	}
	return nil
}

// Result is what one run measured.
type Result struct {
	Variant    string
	Contenders int
	// Paths is the number of independent lock paths of a run of many
	// locks at once (Config.Paths), each with Contenders contenders; 0 for
	// one lock.
	Paths        int `json:",omitempty"`
	Hold         time.Duration
	Idle         time.Duration
	Reentries    int
	Acquisitions int64
	Elapsed      time.Duration
	// Acquire is the time from calling Lock to its return.
	Acquire Latency
	// Handoff is the time from just before one holder calls Unlock to
	// just after the next holder's Lock returns, for every acquisition
	// whose Lock was already waiting when the release began (so there is
	// no handoff at one contender).
	Handoff Latency
	// HandoffRelease, HandoffServer and HandoffWake split the handoffs
	// in which the next holder was woken by a watch event, at two moments
	// seen on the wire: the releasing holder's first packet after it
	// called Unlock (its delete) leaving the client, and the wake-up event
	// reaching the next holder's session. Release is the releasing lock's
	// own work before its delete goes out; Server is the servers' part
	// (the delete through the quorum, the watch firing, the event's way
	// back); Wake is the next holder's work after the event (go-zookeeper,
	// the lock's code, and any read it makes before it knows it holds the
	// lock).
	HandoffRelease, HandoffServer, HandoffWake Latency
	// Notifications is the number of watch events that reached the
	// contenders' sessions; SelfNotifications is the part of them that
	// told a contender about a change to its own node, made by itself (its
	// hold monitor's data watch, fired by its own delete on Unlock or its
	// own setData), which wakes no other contender: every event that
	// reached a contender while it held the lock (Lock returned, Unlock not
	// yet), and, for locks that name their node (Node()), the events about
	// that node that reached it while it was still acquiring.
	Notifications, SelfNotifications int64
	// SelfDeleted is the NodeDeleted part of SelfNotifications.
	SelfDeleted int64
	// LockStats sums Stats() over the contenders' locks, for locks that
	// keep statistics; nil otherwise.
	LockStats *zklocks.Stats
	// Server is what the servers counted during the run.
	Server ServerCounts
	// Floors are the floors the run was compared with.
	Floors Floors
	// Holds is the number of holds recorded and checked for mutual
	// exclusion (one per acquisition).
	Holds int
	// Rounds is the number of runs merged into this result (Merge).
	Rounds int
	// PerRound holds each round's headline figures, in round order, for
	// medians with intervals and paired comparisons (absent from a
	// results.json written before they were kept).
	PerRound []RoundFigures `json:",omitempty"`
	// ClientCPU is the CPU time this process used while the contenders
	// ran (getrusage): the client side's cost, zero for a driven peer.
	ClientCPU time.Duration
	// LostHolds counts holds the lock reported lost before Unlock (Done
	// closed, Unlock failing with the variant's ErrLockLost): a lease
	// lock's eviction of a holder it judged stalled. They are left out of
	// the mutual exclusion check and counted here instead.
	LostHolds int64
	// External marks a peer run by a driver in a child process (curator,
	// kazoo): the harness sees its holds and the servers' counters, not
	// its wire, so the client-side counts (Notifications and the self
	// ones, LockStats, the handoff split) are zero because they were not
	// seen, not because they were measured; reports show "-" for them.
	External bool `json:",omitempty"`

	hists *runHists
}

// runHists are the histograms behind a Result's latencies, kept so that
// rounds of the same run can be merged.
type runHists struct{ acquire, handoff, release, server, wake *histogram }

func (r *Result) summarize() {
	h := r.hists
	r.Acquire, r.Handoff = h.acquire.summary(), h.handoff.summary()
	r.HandoffRelease, r.HandoffServer, r.HandoffWake = h.release.summary(), h.server.summary(), h.wake.summary()
}

// Merge adds another round of the same variant and number of contenders
// to r: counts and times add up, latency histograms merge. The floors of
// the first round are kept.
func (r *Result) Merge(o Result) error {
	if r.Variant != o.Variant || r.Contenders != o.Contenders || r.Paths != o.Paths {
		return fmt.Errorf("bench: cannot merge %s/%d/%d into %s/%d/%d", o.Variant, o.Paths, o.Contenders, r.Variant, r.Paths, r.Contenders)
	}
	if r.hists == nil || o.hists == nil {
		return errors.New("bench: merge needs results of Run")
	}
	r.Acquisitions += o.Acquisitions
	r.Holds += o.Holds
	r.LostHolds += o.LostHolds
	r.Elapsed += o.Elapsed
	r.ClientCPU += o.ClientCPU
	r.Notifications += o.Notifications
	r.SelfNotifications += o.SelfNotifications
	r.SelfDeleted += o.SelfDeleted
	if o.LockStats != nil {
		st := zklocks.Stats{}
		if r.LockStats != nil {
			st = *r.LockStats
		}
		st.Requests += o.LockStats.Requests
		st.Notifications += o.LockStats.Notifications
		r.LockStats = &st
	}
	r.Server.WatchersFired += o.Server.WatchersFired
	r.Server.Proposals += o.Server.Proposals
	r.Server.PacketsReceived += o.Server.PacketsReceived
	r.Server.PacketsSent += o.Server.PacketsSent
	if r.Server.WatchersByType == nil {
		r.Server.WatchersByType = map[string]int64{}
	}
	for k, v := range o.Server.WatchersByType {
		r.Server.WatchersByType[k] += v
	}
	r.hists.acquire.merge(o.hists.acquire)
	r.hists.handoff.merge(o.hists.handoff)
	r.hists.release.merge(o.hists.release)
	r.hists.server.merge(o.hists.server)
	r.hists.wake.merge(o.hists.wake)
	r.summarize()
	r.Rounds += max(o.Rounds, 1)
	r.PerRound = append(r.PerRound, o.PerRound...)
	return nil
}

// Throughput is acquisitions per second.
func (r Result) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Acquisitions) / r.Elapsed.Seconds()
}

func (r Result) per(x int64) float64 {
	if r.Acquisitions == 0 {
		return 0
	}
	return float64(x) / float64(r.Acquisitions)
}

// WatchersPerRelease is the number of watchers the servers fired per
// release, leaving out the releasing holder's watch on its own node: the
// contenders a release wakes up. Every acquisition is released once.
func (r Result) WatchersPerRelease() float64 {
	return r.per(r.Server.WatchersFired - r.SelfNotifications)
}

// WakeupsOnDeletePerRelease is the part of WatchersPerRelease that the
// deletes fired (NodeDeleted), leaving out the watchers fired by data
// changes (lease stamps and renewals, count updates in node data): the
// contenders a release itself wakes up, the herd-effect figure.
func (r Result) WakeupsOnDeletePerRelease() float64 {
	return r.per(r.Server.WatchersByType["zk_sum_node_deleted_watch_count"] - r.SelfDeleted)
}

// RawWatchersPerRelease counts every watcher the servers fired.
func (r Result) RawWatchersPerRelease() float64 { return r.per(r.Server.WatchersFired) }

// SelfWatchesPerRelease is the releasing holder's own watch per release.
func (r Result) SelfWatchesPerRelease() float64 { return r.per(r.SelfNotifications) }

// WritesPerAcquisition is the leader's proposals per acquisition.
func (r Result) WritesPerAcquisition() float64 { return r.per(r.Server.Proposals) }

// NotificationsPerAcquisition is watch events received per acquisition.
func (r Result) NotificationsPerAcquisition() float64 { return r.per(r.Notifications) }

// PacketsPerAcquisition is client packets the servers received per
// acquisition (requests and pings).
func (r Result) PacketsPerAcquisition() float64 { return r.per(r.Server.PacketsReceived) }

// HandoffFloorRatio is the handoff p50 over the delete-to-notification
// floor's p50, the median over the rounds of each round's handoff over
// that round's floor (0 when either is missing).
func (r Result) HandoffFloorRatio() float64 {
	if e := r.Estimate(FigHandoffFloor); e.N > 0 && e.Median > 0 && !math.IsInf(e.Median, 0) {
		return e.Median
	}
	return 0
}

// CycleFloorRatio is the mean time per acquisition (elapsed over
// acquisitions) over the create+delete floor's p50: 1.0 means the lock
// costs no more than its two writes.
func (r Result) CycleFloorRatio() float64 {
	if r.Acquisitions == 0 {
		return 0
	}
	return ratio(r.Elapsed/time.Duration(r.Acquisitions), r.Floors.CreateDelete.P50)
}

func ratio(a, b time.Duration) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// ErrMutualExclusion is returned (wrapped) when a run's recorded history
// shows two holders at once, or a token that did not grow.
var ErrMutualExclusion = errors.New("bench: mutual exclusion violated")

type nodeNamer interface{ Node() string }

type statser interface{ Stats() zklocks.Stats }

// contender is one goroutine's state.
type contender struct {
	id     int
	s      *session
	l      zklocks.Locker
	ctx    context.Context
	shared bool // a reader of a read-write lock
	// Latency samples, turned into histograms once the run is over (one
	// HDR histogram per contender and kind would cost megabytes at N=64).
	acquire []time.Duration
	handoff []time.Duration
	release []time.Duration // release to the releaser's delete leaving the client
	server  []time.Duration // that delete to the wake-up event reaching the next holder's session
	wake    []time.Duration // that event to the next holder's Lock returning
	base    time.Duration   // clock() at the run's start
	holds   []Hold
	lost    int64 // holds reported lost by the lock
	// owned is the set of nodes this contender held, for locks that name
	// their node (Node()).
	owned map[string]bool
}

// Hold is one recorded hold: Enter just after Lock returned, Exit just
// before Unlock was called, both on the run's monotonic clock. Lost marks
// a hold the lock reported lost before Unlock.
type Hold struct {
	Contender   int
	Enter, Exit time.Duration
	Token       int64
	Lost        bool
	Shared      bool // a reader's hold of a read-write lock
}

// isLost recognises the variants' "lock lost" errors by their common
// sentinel text ("<pkg>: lock lost"), since each package has its own
// ErrLockLost.
func isLost(err error) bool { return err != nil && strings.Contains(err.Error(), "lock lost") }

// Run performs one run. Sessions are opened, and the lock path prepared,
// before the servers' counters are read, and closed after they are read
// again, so the counts hold only the contention.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if len(cfg.Servers) == 0 {
		return Result{}, errors.New("bench: no servers")
	}
	if cfg.Contenders <= 0 {
		cfg.Contenders = 1
	}
	if cfg.Acquisitions <= 0 && cfg.Duration <= 0 {
		cfg.Duration = 3 * time.Second
	}
	if cfg.Variant.Driver != nil {
		return runDriver(ctx, cfg)
	}
	if cfg.Variant.New == nil {
		return Result{}, errors.New("bench: no variant")
	}
	if cfg.Reentries > 0 && cfg.Variant.Reenter == nil {
		cfg.Reentries = 0
	}
	res := Result{Variant: cfg.Variant.Name, Contenders: cfg.Contenders, Paths: cfg.Paths, Hold: cfg.Hold, Idle: cfg.Idle, Reentries: cfg.Reentries, Rounds: 1}
	if cfg.Floors != nil {
		res.Floors = *cfg.Floors
	}

	ss, err := connectAll(ctx, cfg.Servers, cfg.sessions())
	if err != nil {
		return res, err
	}
	closed := false
	closeSessions := func() {
		if !closed {
			closed = true
			closeAll(ss)
		}
	}
	defer closeSessions()
	admin := ss[0].conn()

	dir, err := makeRunDir(admin, fmt.Sprintf("%s-n%d", cfg.Variant.Name, cfg.Contenders))
	if err != nil {
		return res, err
	}
	defer deleteTree(admin, dir)
	lockPath := dir + "/lock"
	if err := cfg.makeLockPaths(admin, lockPath); err != nil {
		return res, err
	}

	cs := make([]*contender, cfg.sessions())
	for i := range cs {
		newLock, shared := cfg.Variant.New, cfg.Variant.Reader != nil && cfg.Variant.Readers(i)
		if shared {
			newLock = cfg.Variant.Reader
		}
		l, err := newLock(ss[i].zs, cfg.pathOf(lockPath, i))
		if err != nil {
			return res, fmt.Errorf("bench: new %s: %w", cfg.Variant.Name, err)
		}
		c := &contender{id: i, s: ss[i], l: l, ctx: ctx, shared: shared}
		if cfg.Acquisitions > 0 {
			c.holds = make([]Hold, 0, cfg.Acquisitions/cfg.Contenders+2)
		}
		cs[i] = c
	}

	settle(ctx, cfg.Servers)
	before, err := takeSnapshot(cfg.Servers)
	if err != nil {
		return res, err
	}
	for _, s := range ss {
		s.reset()
	}

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	for _, c := range cs {
		c.ctx = runCtx
		if cfg.Variant.Context != nil {
			c.ctx = cfg.Variant.Context(runCtx, c.id)
		}
	}
	var (
		tickets      atomic.Int64
		stop         atomic.Bool
		lastRelease  atomic.Int64
		lastReleaser atomic.Pointer[session]
	)
	tickets.Store(int64(cfg.Acquisitions))
	lastRelease.Store(-1)

	if cfg.OnStart != nil {
		cfg.OnStart()
	}
	base := clock()
	since := func() time.Duration { return clock() - base }
	for _, c := range cs {
		c.base = base
		c.s.base.Store(int64(base))
		c.s.wakeAt.Store(-1)
		c.s.release.Store(&lastRelease)
	}
	var timer *time.Timer
	if cfg.Acquisitions <= 0 {
		timer = time.AfterFunc(cfg.Duration, func() { stop.Store(true) })
	}
	cpuAtStart := processCPU()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.loop(cfg, &tickets, &stop, &lastRelease, &lastReleaser, since); err != nil {
				cancel(fmt.Errorf("contender %d: %w", c.id, err))
			}
		}()
	}
	// A peer Lock ignores ctx: if the run is cancelled, closing the
	// sessions is what unblocks it.
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-runCtx.Done():
		select {
		case <-waited:
		case <-time.After(SessionTimeout):
			closeSessions()
			<-waited
		}
	}
	res.Elapsed = since()
	res.ClientCPU = processCPU() - cpuAtStart
	if cfg.OnStop != nil {
		cfg.OnStop()
	}
	if timer != nil {
		timer.Stop()
	}
	if err := context.Cause(runCtx); err != nil && runCtx.Err() != nil {
		return res, fmt.Errorf("bench: %s with %d contenders: %w", cfg.Variant.Name, cfg.Contenders, err)
	}

	settle(ctx, cfg.Servers)
	after, err := takeSnapshot(cfg.Servers)
	if err != nil {
		return res, err
	}
	res.Server, err = diff(before, after)
	if err != nil {
		return res, err
	}

	acq, hand, rel, srv, wake := newHistogram(), newHistogram(), newHistogram(), newHistogram(), newHistogram()
	var holds []Hold
	var st zklocks.Stats
	hasStats := false
	for _, c := range cs {
		acq.recordAll(c.acquire)
		hand.recordAll(c.handoff)
		rel.recordAll(c.release)
		srv.recordAll(c.server)
		wake.recordAll(c.wake)
		holds = append(holds, c.holds...)
		res.LostHolds += c.lost
		res.Notifications += c.s.events.Load()
		// Self: every event that reached a holder, plus, for locks that
		// name their node, events about it that came while acquiring (a
		// timeout holder's "held" record, when a long wait made Lock
		// write it before returning).
		res.SelfNotifications += c.s.holdSelf.Load()
		res.SelfDeleted += c.s.holdSelfDeleted.Load()
		if len(c.owned) > 0 {
			all, deleted := c.s.eventsOn(c.owned)
			res.SelfNotifications += all
			res.SelfDeleted += deleted
		}
		if sl, ok := c.l.(statser); ok {
			hasStats = true
			x := sl.Stats()
			st.Requests += x.Requests
			st.Notifications += x.Notifications
		}
	}
	if hasStats {
		res.LockStats = &st
	}
	res.hists = &runHists{acq, hand, rel, srv, wake}
	res.summarize()
	res.Acquisitions = int64(len(holds))
	res.Holds = len(holds)
	res.PerRound = []RoundFigures{res.wholeRun()}

	// Nothing of the lock may be left behind. The sync first: admin may
	// talk to a follower that has not applied the last release yet.
	_, _ = admin.Sync(lockPath)
	if cfg.Variant.NodeAtPath {
		for k := range max(cfg.Paths, 1) {
			p := cfg.pathOf(lockPath, k)
			if ok, _, err := admin.Exists(p); err == nil && ok {
				return res, fmt.Errorf("bench: %s left its lock node %s behind", cfg.Variant.Name, p)
			}
		}
	} else if left := leftBehind(admin, lockPath); len(left) > 0 {
		return res, fmt.Errorf("bench: %s left %d nodes behind under %s: %v", cfg.Variant.Name, len(left), lockPath, left)
	}
	if err := checkPaths(holds, cfg.Variant.Permits, cfg.Paths); err != nil {
		return res, fmt.Errorf("bench: %s with %d contenders: %w", cfg.Variant.Name, cfg.Contenders, err)
	}
	return res, nil
}

// loop is one contender: take a ticket (or check the clock), lock, hold,
// release, until the run is over.
func (c *contender) loop(cfg Config, tickets *atomic.Int64, stop *atomic.Bool, lastRelease *atomic.Int64,
	lastReleaser *atomic.Pointer[session], since func() time.Duration) error {
	namer, _ := c.l.(nodeNamer)
	for {
		if cfg.Acquisitions > 0 {
			if tickets.Add(-1) < 0 {
				return nil
			}
		} else if stop.Load() {
			return nil
		}
		if c.ctx.Err() != nil {
			return nil
		}
		called := since()
		if err := c.l.Lock(c.ctx); err != nil {
			if c.ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("Lock: %w", err)
		}
		enter := since()
		c.s.holding.Store(true)
		if cfg.Acquired != nil {
			cfg.Acquired.Add(1)
		}
		c.acquire = append(c.acquire, enter-called)
		if rel := time.Duration(lastRelease.Load()); rel >= 0 && called < rel {
			c.handoff = append(c.handoff, enter-rel)
			// Split the handoff at the releaser's delete leaving its
			// client and the wake-up event reaching ours.
			ev := time.Duration(c.s.wakeAt.Load())
			sent := time.Duration(-1)
			if r := lastReleaser.Load(); r != nil {
				if at := r.sentAt.Load(); at >= 0 {
					sent = time.Duration(at) - c.base
				}
			}
			if sent >= rel && ev > sent && ev <= enter {
				c.release = append(c.release, sent-rel)
				c.server = append(c.server, ev-sent)
				c.wake = append(c.wake, enter-ev)
			}
		}
		token := c.l.Token()
		done := c.l.Done()
		if namer != nil {
			if c.owned == nil {
				c.owned = map[string]bool{}
			}
			c.owned[namer.Node()] = true
		}
		var err error
		if cfg.Hold > 0 {
			time.Sleep(cfg.Hold)
		}
		for range cfg.Reentries {
			if err = cfg.Variant.Reenter(c.ctx, c.l); err != nil {
				err = fmt.Errorf("re-entry: %w", err)
				break
			}
		}
		exit := since()
		c.holds = append(c.holds, Hold{Contender: c.id, Enter: enter, Exit: exit, Token: token, Shared: c.shared})
		c.s.arm()
		lastReleaser.Store(c.s)
		lastRelease.Store(int64(exit))
		uctx := c.ctx
		if uctx.Err() != nil {
			uctx = context.WithoutCancel(uctx)
		}
		uerr := c.l.Unlock(uctx)
		c.s.holding.Store(false)
		if uerr != nil || err != nil {
			// A hold the lock itself reports lost (Done closed before
			// Unlock: a lease lock evicted a holder it judged stalled) is
			// counted, left out of the exclusion check (the lock told
			// the holder to stop; only its fencing token protects), and
			// the contender goes on. Any other error ends the run.
			select {
			case <-done:
				if uerr == nil || isLost(uerr) {
					c.holds[len(c.holds)-1].Lost = true
					c.lost++
					continue
				}
			default:
			}
			if uerr != nil {
				return errors.Join(err, fmt.Errorf("Unlock: %w", uerr))
			}
			return err
		}
		if cfg.Idle > 0 {
			time.Sleep(cfg.Idle)
		}
	}
}

// CheckHistory checks the recorded holds with internal/history's checker
// (the one the conformance suite uses): no two holds overlap, and fencing
// tokens grow strictly from one hold to the next. A lock that gives no
// tokens at all (the peer: Token is always 0) is checked for overlaps only.
// Holds the lock reported lost are left out. With permits above one (a
// semaphore) it checks that no more than permits holds are open at once
// instead (history.CheckPermits).
func CheckHistory(holds []Hold, permits int) error {
	h := make(history.History, 0, len(holds))
	tokens := false
	for _, x := range holds {
		if x.Lost {
			continue
		}
		h = append(h, history.Hold{Holder: fmt.Sprintf("contender %d", x.Contender), Enter: x.Enter, Exit: x.Exit,
			Token: x.Token, Shared: x.Shared})
		tokens = tokens || x.Token != 0
	}
	if permits > 1 {
		if err := history.CheckPermits(h, permits); err != nil {
			return fmt.Errorf("%w: %w", ErrMutualExclusion, err)
		}
		return nil
	}
	if !tokens {
		slices.SortFunc(h, func(a, b history.Hold) int { return cmp.Compare(a.Enter, b.Enter) })
		for i := range h {
			h[i].Token = int64(i + 1)
		}
	}
	if err := history.Check(h); err != nil {
		return fmt.Errorf("%w: %w", ErrMutualExclusion, err)
	}
	return nil
}
