package zkop

import (
	"context"
	"errors"
	"time"
)

// Retry pacing, the one policy of every retry loop in the module (the
// queue's, the fixed node's, the re-entrant count's read-back, the
// lease's first stamp, the background clean-up). While the client is
// disconnected go-zookeeper keeps new requests queued, failing them only
// when a connection goes while they are in flight (ErrConnectionClosed)
// or when a whole round of dials has failed (ErrNoServer, about once a
// second), and at once when the connection has been closed for good. So a
// short first pause rides out a blip, and pauses that double up to half a
// second keep an outage from becoming a busy loop.
const (
	BackoffFirst = 20 * time.Millisecond
	BackoffMax   = 500 * time.Millisecond
)

// Backoff counts one operation's failures in a row and paces its
// retries. Its zero value is ready: the first pause is BackoffFirst.
type Backoff struct{ n int }

// Next counts one more failure and returns the pause before the retry.
func (b *Backoff) Next() time.Duration {
	b.n++
	return min(BackoffFirst<<min(b.n-1, 8), BackoffMax)
}

// Failures is the number of failures in a row so far.
func (b *Backoff) Failures() int { return b.n }

// Sleep counts one more failure and sleeps its pause, or returns ctx's
// error if ctx ends first.
func (b *Backoff) Sleep(ctx context.Context) error { return Sleep(ctx, b.Next()) }

// ErrStopped is Pause's and RetryWhenBack's answer when their stop
// channel closed first (the caller's hold was lost meanwhile).
var ErrStopped = errors.New("stopped")

// Pause counts one more failure, err, and sleeps its pause. It returns
// err itself once more than limit failures (0: no limit) have been seen
// in a row, ctx's error if ctx ends first, and ErrStopped if stop (nil:
// never) closes first.
func Pause(ctx context.Context, b *Backoff, err error, limit int, stop <-chan struct{}) error {
	d := b.Next()
	if limit > 0 && b.Failures() > limit {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return ErrStopped
	}
}

// RetryWhenBack is the pause between two tries of a request that failed
// with err for want of a connection: Pause, then a wait until the client
// has a session again, so that nothing is sent on a closed connection
// (AwaitSession: ErrConnClosed once the connection has been closed).
// Each DialRound without a session counts as one more failure in a row.
// It returns nil when it is time to try again.
func (c *Client) RetryWhenBack(ctx context.Context, b *Backoff, err error, limit int, stop <-chan struct{}) error {
	for {
		if err := Pause(ctx, b, err, limit, stop); err != nil {
			return err
		}
		werr := c.AwaitSession(ctx, DialRound)
		if !Transient(werr) {
			return werr // nil: back
		}
		err = werr
	}
}

// Retryable reports whether a request that failed with err is worth
// sending again: it failed for want of a connection, and ctx still runs.
func Retryable(ctx context.Context, err error) bool {
	return Transient(err) && ctx.Err() == nil
}
