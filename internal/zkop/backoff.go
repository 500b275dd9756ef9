package zkop

import (
	"context"
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
