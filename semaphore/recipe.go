package semaphore

import (
	"context"
	"fmt"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockq"
)

// lock is the recipe: the queue of the sequential lock, where the first N
// nodes hold instead of the first one. A release can let in only the
// first waiter, the node just behind the holders, so it alone watches the
// queue; every other waiter watches its predecessor, as in the mutex, and
// a waiter that is let in announces it to the one behind (promoted.go).
func (s *Semaphore) lock(ctx context.Context, n *lockq.Node, wait bool) error {
	// 1. Join the queue: create an EPHEMERAL_SEQUENTIAL child of the path.
	if err := s.q.Join(ctx, n); err != nil {
		return err
	}
	for waited := false; ; waited = true {
		// 2. List the children and sort them by sequence number.
		line, err := s.q.Line(ctx, n)
		if err != nil {
			return err
		}

		// 3. Fewer than N nodes ahead of ours: we hold one of the N
		//    permits. Nodes are never created ahead of ours, so that stays
		//    true. A waiter let in tells the one behind it, which may now
		//    be the first waiter (with N = 1 that one already watches us).
		if line.Ahead < s.permits {
			if waited && s.permits > 1 {
				s.q.Mark(ctx, n, promoted)
			}
			return nil
		}
		if !wait {
			return fmt.Errorf("%w: all %d permits are held", zklocks.ErrLocked, s.permits)
		}

		// 4. Exactly N ahead: we are the first waiter, and any holder's
		//    release lets us in. Watch the queue itself. (With N = 1 the
		//    one holder is our predecessor, and step 5 is the mutex's.)
		// 5. More than N ahead: watch only our predecessor, until it goes
		//    or announces that it was let in. Then list again (step 2).
		if line.Ahead == s.permits && s.permits > 1 {
			err = s.q.AwaitQueueChange(ctx, n, s.permits)
		} else {
			_, err = s.q.AwaitGone(ctx, n, line, seesPromoted)
		}
		if err != nil {
			return err
		}
	}
}
