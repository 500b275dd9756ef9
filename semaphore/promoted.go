package semaphore

import (
	"bytes"
	"context"
	"time"

	"github.com/zklocks/zklocks/internal/lockq"
)

// promoted is what a waiter that was let in writes into its node
// (lockq.Queue.Mark): the waiter behind it, which watches that node, may
// have just become the first waiter, although no node ahead of it went
// away, and the write's data watch tells it.
var promoted = []byte("held")

// seesPromoted is the wait hook of a waiter behind another waiter: a
// predecessor whose data already says promoted was let in after our last
// listing, so we may be the first waiter now.
func seesPromoted(_ context.Context, w lockq.Wait) (time.Duration, error) {
	if bytes.Equal(w.PredData, promoted) {
		return lockq.ListNow, nil
	}
	return 0, nil
}
