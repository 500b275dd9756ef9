package lockq

import (
	"context"
	"errors"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
)

// Retry bounds. The pacing is zkop.Backoff's, the module's one policy,
// and the pauses are zkop's (Pause, RetryWhenBack).
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

// pause is zkop.Pause, ended by the loss of the hold lost watches (nil:
// none), which it then returns.
func (q *Queue) pause(ctx context.Context, b *backoff, err error, limit int, lost *hold.Monitor) error {
	return q.lostIfStopped(zkop.Pause(ctx, b, err, limit, doneOf(lost)), lost)
}

// retryWhenBack is zkop.Client.RetryWhenBack, ended by the loss of the
// hold lost watches (nil: none), which it then returns.
func (q *Queue) retryWhenBack(ctx context.Context, b *backoff, err error, limit int, lost *hold.Monitor) error {
	return q.lostIfStopped(q.c.RetryWhenBack(ctx, b, err, limit, doneOf(lost)), lost)
}

func doneOf(m *hold.Monitor) <-chan struct{} {
	if m == nil {
		return nil
	}
	return m.Done()
}

func (q *Queue) lostIfStopped(err error, lost *hold.Monitor) error {
	if errors.Is(err, zkop.ErrStopped) {
		return q.lost(lost.Err())
	}
	return err
}
