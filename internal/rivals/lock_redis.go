package rivals

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisLock is the single-instance Redis lock that Redis's documentation
// describes and most Redis users write: SET key value NX PX ttl takes it,
// with a random value that names this hold, and a script that deletes the
// key only if it still holds that value releases it, so that a holder
// whose key expired cannot delete the next holder's.
//
// Redis cannot tell a waiter that the key is gone (keyspace notifications
// are off by default and lossy when on), so waiters poll: try, pause,
// try again, as the documentation's clients and redsync do. A release is
// seen only at the next try: the handoff costs about half a pause.
//
// It has no fencing token. A counter could be incremented in the same
// script that takes the key, but with appendfsync everysec a crash loses
// up to a second of increments and the restarted server hands the same
// numbers out again (a failover to a replica loses whatever the replica
// had not received), and a fence that can go backwards fences nothing.
// Token returns 0.
type RedisLock struct {
	client *redis.Client
	key    string
	ttl    time.Duration
	pause  time.Duration
	value  string // this hold's value; "" when not held
}

// releaseScript deletes the key only if it holds this hold's value: GET
// then DEL in one script, which Redis runs without interleaving another
// command.
var releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0
`)

// NewRedisLock connects a client of its own to the Redis at addr, for the
// lock named name, held for TTL at most (default 10 s).
func NewRedisLock(addr, name string, o Options) *RedisLock {
	return &RedisLock{
		client: newRedisClient(addr),
		key:    "zklocks-rivals:" + name,
		ttl:    o.ttl(),
		pause:  o.retryPause(),
	}
}

// newRedisClient is a client that never retries a command by itself: a
// SET NX resent after a lost reply would find its own key and report the
// lock as taken by someone else.
func newRedisClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true})
}

// Lock tries SET NX PX until it succeeds or ctx ends.
func (l *RedisLock) Lock(ctx context.Context) error {
	if l.value != "" {
		return ErrHeld
	}
	value, err := randomValue()
	if err != nil {
		return err
	}
	for {
		err := l.client.Do(ctx, "SET", l.key, value, "NX", "PX", l.ttl.Milliseconds()).Err()
		switch {
		case err == nil:
			l.value = value
			return nil
		case !errors.Is(err, redis.Nil):
			// The SET may have been carried out with its reply lost.
			l.release(context.WithoutCancel(ctx), value)
			return ctxErr(ctx, "rivals: redis lock", err)
		}
		if err := pause(ctx, l.pause); err != nil {
			return ctxErr(ctx, "rivals: redis lock", err)
		}
	}
}

// release runs the release script for value within a few seconds and
// reports whether it deleted the key.
func (l *RedisLock) release(ctx context.Context, value string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, releaseAfterCancel)
	defer cancel()
	n, err := releaseScript.Run(ctx, l.client, []string{l.key}, value).Int()
	return n == 1, err
}

// Unlock releases the lock if the key still holds this hold's value.
func (l *RedisLock) Unlock(ctx context.Context) error {
	if l.value == "" {
		return fmt.Errorf("rivals: redis unlock: %w", ErrNotHeld)
	}
	n, err := releaseScript.Run(ctx, l.client, []string{l.key}, l.value).Int()
	if err != nil {
		return ctxErr(ctx, "rivals: redis unlock", err)
	}
	l.value = ""
	if n == 0 {
		return fmt.Errorf("rivals: redis unlock: the key expired (and may be another holder's now): %w", ErrNotHeld)
	}
	return nil
}

// Token is 0: Redis offers no fencing token (see RedisLock).
func (l *RedisLock) Token() int64 { return 0 }

// Close releases a hold and closes the client.
func (l *RedisLock) Close() error {
	var err error
	if l.value != "" {
		_, err = l.release(context.Background(), l.value)
		l.value = ""
	}
	return errors.Join(err, l.client.Close())
}

// randomValue names one hold: 128 random bits, so that no two holds of
// any client ever share a value.
func randomValue() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("rivals: %w", err)
	}
	return hex.EncodeToString(b), nil
}
