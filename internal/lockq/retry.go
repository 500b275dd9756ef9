package lockq

import (
	"context"
	"time"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
)

// Retry bounds. The pacing is zkop.Backoff's, the module's one policy.
const (
	// maxRetries bounds failures in a row where waiting longer is
	// pointless: creates that find the session expired, and a clean-up
	// that cannot get through (it leaves the rest to the background).
	// Joining during an outage has no such bound: it waits while ctx
	// allows.
	maxRetries = 6
	maxParents = 3 // creates that find the lock path missing
)

// backoff counts failures in a row and paces the retries.
type backoff = zkop.Backoff

// pause sleeps after the failure err; it returns err itself once limit
// failures (0: no limit) have been seen, and ctx's error if ctx ends.
// lost, when not nil, ends the sleep with the loss when it closes.
func (q *Queue) pause(ctx context.Context, b *backoff, err error, limit int, lost *hold.Monitor) error {
	d := b.Next()
	if limit > 0 && b.Failures() > limit {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	var done <-chan struct{}
	if lost != nil {
		done = lost.Done()
	}
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-done:
		return q.lost(lost.Err())
	}
}

// retryWhenBack pauses after the failure err (see backoff.pause), then
// waits until the client has a session again, so that nothing is sent on
// a closed connection (zkop.AwaitSession): a connection closed under a
// Lock ends it with zkop.ErrConnClosed. Each zkop.DialRound without a session
// counts as one more failure in a row.
func (q *Queue) retryWhenBack(ctx context.Context, b *backoff, err error, limit int, lost *hold.Monitor) error {
	for {
		if err := q.pause(ctx, b, err, limit, lost); err != nil {
			return err
		}
		werr := q.c.AwaitSession(ctx, zkop.DialRound)
		if !zkop.Transient(werr) {
			return werr // nil: back
		}
		err = werr
	}
}

// retryable reports whether a request that failed with err is worth
// sending again: it failed for want of a connection, and ctx still runs.
func retryable(ctx context.Context, err error) bool {
	return zkop.Transient(err) && ctx.Err() == nil
}
