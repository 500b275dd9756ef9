package lockq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
)

// AwaitGone watches our predecessor in line l, and only it, and waits. It
// reports gone when the predecessor has been deleted, and not gone when
// the queue must be listed again first (the predecessor changed in an
// unexpected way, or the wait hook asked for it); it fails when ctx ends,
// when our own node is lost, or when the watch cannot be set.
//
// The watch is a data watch, as Curator's: an exists watch on a node that
// is already gone would stay behind as a creation watch. A data change of
// the predecessor (a count or a lease written into it) sets the watch
// again at once; a wait that ends without the predecessor gone keeps its
// watch for the next.
//
// A variant that does something while it waits passes it as hooks (see
// WhileWaiting).
func (q *Queue) AwaitGone(ctx context.Context, n *Node, l Line, hooks ...WhileWaiting) (gone bool, err error) {
	var b backoff
	for {
		if n.ev == nil || n.watched != l.Pred {
			ok, err := q.watch(ctx, n, l, &b)
			if err != nil || !ok {
				return !ok && err == nil, err // !ok: gone already
			}
		}
		again, err := q.callHooks(ctx, n, l, hooks)
		if err != nil {
			return false, err
		}
		if again == ListNow {
			n.ev = nil // read the predecessor afresh next time: the hook judged what it read
			return false, nil
		}
		r, err := q.wait(ctx, n, again)
		switch {
		case err != nil:
			return false, err
		case r == predGone:
			return true, nil
		case r == predOther, r == hookAgain && !l.Second():
			return false, nil // the queue may have changed: list first
		}
		// Still there, still our predecessor: wait again.
	}
}

// result is what ended one wait.
type result int

const (
	predGone    result = iota // the predecessor was deleted
	predChanged               // its data changed: watch it again
	predOther                 // any other event: list again
	hookAgain                 // the hook's again passed
)

// watch sets the data watch on l.Pred. It reports false when the node is
// already gone.
func (q *Queue) watch(ctx context.Context, n *Node, l Line, b *backoff) (bool, error) {
	for {
		data, st, ch, err := q.c.GetW(ctx, l.Pred)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			n.ev = nil
			return false, nil
		case zkop.Retryable(ctx, err):
			if err := q.retryWhenBack(ctx, b, err, 0, n.mon); err != nil {
				return false, err
			}
			continue
		case err != nil:
			return false, fmt.Errorf("watch %s: %w", l.Pred, err)
		}
		if n.log != nil && n.watched != l.Pred {
			n.log.Wait(ctx, n.path, l.Pred, l.Ahead, q.c.Conn.SessionID())
		}
		n.watched, n.ev, n.predData, n.predStat = l.Pred, ch, data, st
		*b = backoff{}
		return true, nil
	}
}

// callHooks calls the wait hooks; the soonest again wins. A hook that
// failed once our node's session has ended (its request met the expiry,
// or ran on the connection's next session and met our node gone with the
// old one) fails the wait as the session's loss, the error every other
// step of the wait would have given. That is decided from the session
// ids, not from whether our monitor has seen the expiry yet.
func (q *Queue) callHooks(ctx context.Context, n *Node, l Line, hooks []WhileWaiting) (time.Duration, error) {
	var soonest time.Duration
	for _, h := range hooks {
		again, err := h(ctx, Wait{Head: l.Head, Self: n.path, Pred: l.Pred, PredData: n.predData, PredStat: n.predStat, Second: l.Second()})
		switch {
		case err != nil && ctx.Err() != nil:
			return 0, ctx.Err()
		case err != nil && (errors.Is(err, zk.ErrSessionExpired) || q.sessionGone(n)):
			return 0, fmt.Errorf("%w (wait hook: %v)", q.lost(hold.ErrSessionExpired), err)
		case err != nil:
			return 0, fmt.Errorf("wait hook: %w", err)
		case again == ListNow:
			return ListNow, nil
		case again > 0 && (soonest == 0 || again < soonest):
			soonest = again
		}
	}
	return soonest, nil
}

// wait blocks on the watch until it fires, the hook's again has passed,
// our node is lost, or ctx ends.
func (q *Queue) wait(ctx context.Context, n *Node, again time.Duration) (result, error) {
	var wake <-chan time.Time
	if again > 0 {
		t := time.NewTimer(again)
		defer t.Stop()
		wake = t.C
	}
	select {
	case e := <-n.ev:
		n.ev = nil
		q.c.Notified()
		switch {
		case e.Type == zk.EventNodeDeleted:
			return predGone, nil
		case e.Type == zk.EventNodeDataChanged:
			return predChanged, nil
		case e.Type == zk.EventNotWatching && errors.Is(e.Err, zk.ErrSessionExpired):
			return 0, q.lost(hold.ErrSessionExpired)
		case e.Type == zk.EventNotWatching:
			return 0, fmt.Errorf("wait: %w", e.Err)
		}
		return predOther, nil
	case <-wake:
		return hookAgain, nil
	case <-n.mon.Done():
		return 0, q.lost(n.mon.Err())
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
