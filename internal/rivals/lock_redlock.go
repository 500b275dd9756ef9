package rivals

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// RedlockLock is Redlock as redsync implements it: SET NX PX with one
// random value on every one of N independent Redis servers (no
// replication between them), and the lock is held when a majority said
// yes within a small part of the TTL. Whatever a failed attempt took is
// released on every server, and the attempt retried after a pause.
//
// Its safety rests on the servers' clocks: a server whose clock jumps
// forward expires the key early, and with one more server lost or
// restarted without its data a second client can win a majority while
// the first still holds. It has no fencing token: its values are random,
// and a counter would have the weaknesses of RedisLock's on each server
// besides differing from server to server. Token returns 0.
type RedlockLock struct {
	clients []*redis.Client
	rs      *redsync.Redsync
	name    string
	ttl     time.Duration
	pause   time.Duration
	mutex   *redsync.Mutex // the current hold, nil when none
}

// NewRedlockLock connects a client of its own to each of the Redis
// servers at addrs, for the lock named name.
func NewRedlockLock(addrs []string, name string, o Options) *RedlockLock {
	l := &RedlockLock{name: "zklocks-rivals:" + name, ttl: o.ttl(), pause: o.retryPause()}
	var pools []redsyncredis.Pool
	for _, a := range addrs {
		c := newRedisClient(a)
		l.clients = append(l.clients, c)
		pools = append(pools, goredis.NewPool(c))
	}
	l.rs = redsync.New(pools...)
	return l
}

// Lock tries until a majority is won or ctx ends. redsync counts its
// tries; here the context alone bounds the wait, as with the other locks.
// redsync's own pause is 50 to 250 ms; the same pause as RedisLock's is
// used instead, so that the two differ by the protocol only.
func (l *RedlockLock) Lock(ctx context.Context) error {
	if l.mutex != nil {
		return ErrHeld
	}
	value, err := randomValue()
	if err != nil {
		return err
	}
	m := l.rs.NewMutex(l.name,
		redsync.WithExpiry(l.ttl),
		redsync.WithTries(math.MaxInt32),
		redsync.WithRetryDelayFunc(func(int) time.Duration { return l.pause/2 + rand.N(l.pause+1) }),
		redsync.WithGenValueFunc(func() (string, error) { return value, nil }),
	)
	if err := m.LockContext(ctx); err != nil {
		// An attempt cut short by ctx releases under that same ended ctx,
		// that is not at all: release what it may have taken here.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseAfterCancel)
		_, _ = l.rs.NewMutex(l.name, redsync.WithValue(value)).UnlockContext(rctx)
		cancel()
		return ctxErr(ctx, "rivals: redlock lock", err)
	}
	l.mutex = m
	return nil
}

// Unlock releases the lock on every server that still holds this hold's
// value, and fails with ErrNotHeld when fewer than a majority did.
func (l *RedlockLock) Unlock(ctx context.Context) error {
	m := l.mutex
	if m == nil {
		return fmt.Errorf("rivals: redlock unlock: %w", ErrNotHeld)
	}
	ok, err := m.UnlockContext(ctx)
	if !ok && ctx.Err() != nil {
		return ctxErr(ctx, "rivals: redlock unlock", err) // still held: the caller may try again
	}
	l.mutex = nil
	if !ok {
		return fmt.Errorf("rivals: redlock unlock: fewer than a majority still held it (%v): %w", err, ErrNotHeld)
	}
	return nil
}

// Token is 0: Redlock offers no fencing token (see RedlockLock).
func (l *RedlockLock) Token() int64 { return 0 }

// Close releases a hold and closes the clients.
func (l *RedlockLock) Close() error {
	var errs []error
	if l.mutex != nil {
		ctx, cancel := context.WithTimeout(context.Background(), releaseAfterCancel)
		if err := l.Unlock(ctx); err != nil && !errors.Is(err, ErrNotHeld) {
			errs = append(errs, err)
		}
		cancel()
	}
	for _, c := range l.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
