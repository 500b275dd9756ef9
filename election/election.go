package election

import (
	"context"
	"errors"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockbase"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/zkop"
)

// ErrNoLeader is Leader's answer when nobody campaigns.
var ErrNoLeader = errors.New("no leader")

// Leader is one term as the election's followers see it.
type Leader struct {
	// Value is what the leader campaigned with: its node's data.
	Value []byte
	// Node is the full path of the leader's node.
	Node string
	// Term is the czxid of the leader's node: it grows from term to term,
	// so a resource can fence on it as on a lock's token.
	Term int64
}

// Election is one candidate in the election at one path. Use one per
// candidate; its methods are safe for concurrent use, and it campaigns
// at most once at a time.
type Election struct {
	base *lockbase.Base
	q    *lockq.Queue

	mu   sync.Mutex
	slot *lockq.Slot // idle, campaigning or leading; guarded by mu
}

var _ zklocks.Locker = (*Election)(nil)

// New returns a candidate for the election at path on session s. It
// checks its arguments and sends nothing to ZooKeeper; it takes the
// options every lock takes (zklocks.WithACL, zklocks.WithLogger).
func New(s *zklocks.Session, path string, opts ...zklocks.Option) (*Election, error) {
	b, err := lockbase.Open("election", s, path, opts, nil)
	if err != nil {
		return nil, err
	}
	e := &Election{base: b, q: lockq.New(b.Client, path, lockq.Config{ACL: b.ACL})}
	e.slot = lockq.NewSlot(&e.mu, e.q)
	return e, nil
}

// Campaign joins the election with value (what Leader and Observe report
// while this candidate leads) and waits until it leads. It returns ctx's
// error when ctx ends first, zklocks.ErrLockLost when its node vanishes
// while it waits, and zklocks.ErrAlreadyLocked when this candidate
// campaigns or leads already. Whenever it fails, its node is gone, or
// deleted in the background as soon as the ensemble can be reached.
func (e *Election) Campaign(ctx context.Context, value []byte) error {
	return e.base.Fail("campaign", e.run(ctx, value, true))
}

// Resign ends the term by deleting this candidate's node, which lets the
// next candidate lead. It returns zklocks.ErrNotLocked when this
// candidate does not lead (a Campaign still waiting is given up by
// ending its ctx), and zklocks.ErrLockLost when its term had already
// ended.
func (e *Election) Resign(ctx context.Context) error {
	return e.base.Fail("resign", e.slot.Unlock(ctx))
}

// Lock is Campaign with no value, Unlock is Resign and TryLock leads only
// if nobody does: an election is a lock that its holder keeps for a term,
// so it is a zklocks.Locker, and the suites every lock passes run
// against it.
func (e *Election) Lock(ctx context.Context) error { return e.base.Fail("lock", e.run(ctx, nil, true)) }

// TryLock leads only if no candidate is in the election; it fails with
// zklocks.ErrLocked otherwise, having joined and left again.
func (e *Election) TryLock(ctx context.Context) error {
	return e.base.Fail("trylock", e.run(ctx, nil, false))
}

// Unlock is Resign.
func (e *Election) Unlock(ctx context.Context) error {
	return e.base.Fail("unlock", e.slot.Unlock(ctx))
}

func (e *Election) run(ctx context.Context, value []byte, wait bool) error {
	return e.slot.Take(ctx, e.base.Log, func(n *lockq.Node) error { return e.campaign(ctx, n, value, wait) })
}

// Leader returns the current leader, after syncing its server with the
// ZooKeeper leader so that every term that began before the call is seen.
// It fails with an error wrapping ErrNoLeader when nobody campaigns. The
// answer may be stale by the time it returns: a follower that acts on it
// fences with its Term.
func (e *Election) Leader(ctx context.Context) (Leader, error) {
	for {
		head, err := e.q.Head(ctx) // after a sync
		switch {
		case err != nil:
			return Leader{}, e.base.Fail("leader", err)
		case head == "":
			return Leader{}, e.base.Fail("leader", ErrNoLeader)
		}
		data, stat, err := e.q.Client().Get(ctx, head)
		if errors.Is(err, zk.ErrNoNode) {
			continue // the term ended since the listing
		}
		if err != nil {
			return Leader{}, e.base.Fail("leader", err)
		}
		return Leader{Value: data, Node: head, Term: stat.Czxid}, nil
	}
}

// Observe returns a channel that receives the leader each time a term
// begins, starting with the current one. It is closed when ctx ends, or
// when the election can not be read any more (no read permission on the
// path, the connection closed for good): Leader then says why. A slow reader misses
// intermediate terms, never the latest: the channel holds one value, and
// a newer one replaces it. Only the leader's node is watched, so
// candidates joining or leaving behind it cost the observer nothing.
func (e *Election) Observe(ctx context.Context) <-chan Leader {
	out := make(chan Leader, 1)
	go func() {
		defer close(out)
		var last int64
		_ = e.observe(ctx, func(l Leader) {
			if l.Term == last {
				return // the same term seen again
			}
			last = l.Term
			select { // keep only the newest
			case <-out:
			default:
			}
			out <- l
		})
	}()
	return out
}

// observe runs the follower's recipe (lookAtHead, recipe.go) until ctx
// ends: it looks again each time the watch fires, and after an error
// that retrying can mend (the connection lost) once a backoff has passed.
// It returns ctx's error, or the first error that retrying can not mend
// (no read permission, the connection closed).
func (e *Election) observe(ctx context.Context, report func(Leader)) error {
	var pace zkop.Backoff
	for ctx.Err() == nil {
		wake, err := e.lookAtHead(ctx, report)
		if err != nil {
			if !zkop.Transient(err) {
				return err
			}
			if err := pace.Sleep(ctx); err != nil {
				return err
			}
			continue
		}
		pace = zkop.Backoff{}
		select {
		case ev := <-wake:
			if ev.Type != zk.EventNotWatching && wake != closed {
				e.q.Client().Notified() // counted in Stats, as every lock counts its events
			}
		case <-ctx.Done():
		}
	}
	return ctx.Err()
}

// closed is a watch that has already fired: lookAtHead's "look again".
var closed = func() chan zk.Event { c := make(chan zk.Event); close(c); return c }()

// Term returns the current term's token, the czxid of this candidate's
// node, while it leads, or 0. Token is the same (zklocks.Locker).
func (e *Election) Term() int64 { return e.slot.Token() }

// Token is Term.
func (e *Election) Token() int64 { return e.slot.Token() }

// Done returns a channel that is closed when the term ends: on Resign, or
// when the node is deleted or the session is lost (as a lock's hold
// ends). When this candidate does not lead it returns a closed channel.
func (e *Election) Done() <-chan struct{} { return e.slot.Done() }

// Err returns why the last term was lost, wrapped in zklocks.ErrLockLost;
// nil while leading, after Resign, and before the first term.
func (e *Election) Err() error { return e.slot.Err() }

// Node returns the full path of this candidate's node while it leads or
// campaigns, "" otherwise.
func (e *Election) Node() string { return e.slot.Node() }

// Stats returns the requests this candidate has sent (Observe's and
// Leader's included) and the watch events it has received.
func (e *Election) Stats() zklocks.Stats { return e.base.Stats() }
