package rivals

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// Locker is what every rival lock offers, the least the comparison needs.
// One Locker is one client (its own connection or session) and holds the
// lock at most once at a time; it is not safe for concurrent use.
type Locker interface {
	// Lock waits until the lock is held or ctx ends. On an error nothing
	// is left held; an ended ctx gives an error wrapping ctx.Err().
	Lock(ctx context.Context) error
	// Unlock releases the lock. It fails with an error wrapping ErrNotHeld
	// when this Locker does not hold it (any more).
	Unlock(ctx context.Context) error
	// Token is the fencing token of the current hold, a number that grows
	// with every hold of the lock, or 0 where the system offers none.
	Token() int64
	// Close releases whatever the Locker holds and closes its client.
	Close() error
}

// System names one rival lock, for tables and flags.
type System string

// The rival locks.
const (
	SystemEtcd         System = "etcd"
	SystemRedis        System = "redis"
	SystemRedlock      System = "redlock"
	SystemPGSession    System = "postgres-session"
	SystemPGXact       System = "postgres-xact"
	defaultTTL                = 10 * time.Second
	defaultRetryPause         = 10 * time.Millisecond
	releaseAfterCancel        = 5 * time.Second
)

// pause waits about d (between d/2 and 3d/2, so that pollers started
// together spread out) or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d/2 + rand.N(d+1))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ctxErr wraps the context's error when ctx has ended, so that
// errors.Is(err, context.DeadlineExceeded) holds whatever error the
// client library returned for the interrupted call (redsync, for one,
// answers ErrFailed).
func ctxErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w (%v)", what, ctx.Err(), err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// advisoryKey maps a lock name onto PostgreSQL's int64 advisory-lock key.
func advisoryKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}
