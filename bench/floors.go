package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// WaitGap is how long the watching session of the notification floor
// waits, its watch set, before the other session deletes the node. A
// contender that is handed the lock has always been waiting for at least
// the holder's critical section; on this kind of machine a session (and
// the server threads that serve it) woken after a pause answers markedly
// slower than one that has just been busy, so a floor measured back to
// back (NotifyHot) is a floor no handoff can reach.
var WaitGap = 20 * time.Millisecond

// Floors are the costs no lock can beat on this ensemble, measured in the
// same run as the locks so that ratios cancel the machine's speed.
type Floors struct {
	// CreateDelete is one session creating an ephemeral node and deleting
	// it again: two quorum writes, the least an acquire plus a release of
	// a node-based lock costs.
	CreateDelete Latency
	// Notify is the time from just before one session deletes a node to
	// the moment another session, which set a data watch on it WaitGap
	// earlier, receives the NodeDeleted event: the least a handoff between
	// two sessions costs. Handoff ratios use it.
	Notify Latency
	// NotifyHot is the same with the delete sent right after the watch was
	// set, for reference.
	NotifyHot Latency
	// Samples is the number of samples behind each.
	Samples int
}

// MeasureFloors measures the floors with samples samples each. Sessions
// are spread over the servers, and the notification pairs rotate over
// every (deleter's member, watcher's member) combination, the same mix a
// round-robin set of contenders sees.
func MeasureFloors(ctx context.Context, servers []string, samples int) (Floors, error) {
	if samples <= 0 {
		samples = 100
	}
	f := Floors{Samples: samples}
	ss, err := connectAll(ctx, servers, 2*len(servers))
	if err != nil {
		return f, err
	}
	defer closeAll(ss)
	deleters, watchers := ss[:len(servers)], ss[len(servers):]

	root, err := makeRunDir(ss[0].conn(), "floors")
	if err != nil {
		return f, err
	}
	defer deleteTree(ss[0].conn(), root)
	node := root + "/n"
	acl := zk.WorldACL(zk.PermAll)

	cd := newHistogram()
	for i := range samples {
		if err := ctx.Err(); err != nil {
			return f, err
		}
		c := deleters[i%len(deleters)].conn()
		t0 := time.Now()
		if _, err := c.Create(node, nil, zk.FlagEphemeral, acl); err != nil {
			return f, fmt.Errorf("bench: floor create: %w", err)
		}
		if err := c.Delete(node, -1); err != nil {
			return f, fmt.Errorf("bench: floor delete: %w", err)
		}
		cd.record(time.Since(t0))
	}
	f.CreateDelete = cd.summary()

	notify := func(gap time.Duration) (Latency, error) {
		h := newHistogram()
		pairs := len(deleters) * len(watchers)
		for i := range samples {
			p := i % pairs
			d, w := deleters[p/len(watchers)].conn(), watchers[p%len(watchers)].conn()
			for attempt := 1; ; attempt++ {
				if err := ctx.Err(); err != nil {
					return Latency{}, err
				}
				took, err := notifyOnce(d, w, node, gap)
				if errors.Is(err, errFloorNodeGone) && attempt < 3 {
					continue // the sample is lost, not the run: take it again
				}
				if err != nil {
					return Latency{}, err
				}
				h.record(took)
				break
			}
		}
		return h.summary(), nil
	}
	if f.NotifyHot, err = notify(0); err != nil {
		return f, err
	}
	if f.Notify, err = notify(WaitGap); err != nil {
		return f, err
	}
	return f, nil
}

// errFloorNodeGone is notifyOnce's failure when the watcher finds no node
// to watch although the deleter made it and the watcher synced: the node
// went with a session hiccup of the loaded machine. MeasureFloors takes
// such a sample again.
var errFloorNodeGone = errors.New("bench: floor watch: the node to watch is gone")

// notifyOnce is one sample of the notification floor: d creates node, w
// watches it, and after gap d deletes it; it returns the time from just
// before the delete to w's event.
func notifyOnce(d, w *zk.Conn, node string, gap time.Duration) (time.Duration, error) {
	acl := zk.WorldACL(zk.PermAll)
	if _, err := d.Create(node, nil, zk.FlagEphemeral, acl); err != nil {
		return 0, fmt.Errorf("bench: floor create: %w", err)
	}
	// The watcher may be on a member that has not applied the create yet:
	// sync first (outside the timed part).
	if _, err := w.Sync(node); err != nil {
		return 0, fmt.Errorf("bench: floor sync: %w", err)
	}
	_, _, ch, err := w.GetW(node)
	if errors.Is(err, zk.ErrNoNode) {
		_ = d.Delete(node, -1) // in case only the watcher's view lost it
		return 0, errFloorNodeGone
	}
	if err != nil {
		return 0, fmt.Errorf("bench: floor watch: %w", err)
	}
	type got struct {
		at time.Time
		ev zk.Event
	}
	gotc := make(chan got, 1)
	go func() { ev := <-ch; gotc <- got{time.Now(), ev} }()
	if gap > 0 {
		time.Sleep(gap)
	}
	t0 := time.Now()
	if err := d.Delete(node, -1); err != nil {
		return 0, fmt.Errorf("bench: floor delete: %w", err)
	}
	select {
	case g := <-gotc:
		if g.ev.Type != zk.EventNodeDeleted {
			return 0, fmt.Errorf("bench: floor watch fired with %v", g.ev.Type)
		}
		return g.at.Sub(t0), nil
	case <-time.After(SessionTimeout):
		return 0, fmt.Errorf("bench: floor watch never fired")
	}
}
