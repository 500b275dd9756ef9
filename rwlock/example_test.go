package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/rwlock"
)

// Two readers share the lock; a writer waits until both are gone, and
// TryRLock fails while it waits, so a stream of readers can not starve it.
func ExampleMutex_RLock() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	path := zktest.ExamplePath("RLock")
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	contender := func() *rwlock.Mutex {
		conn, closeConn := zktest.ExampleConn()
		closers = append(closers, closeConn)
		m, err := rwlock.New(conn, path, rwlock.WithSessionTimeout(sessionTimeout))
		if err != nil {
			panic(err)
		}
		return m
	}
	r1, r2, w, late := contender(), contender(), contender(), contender()

	fmt.Println("r1:", r1.RLock(ctx))
	fmt.Println("r2:", r2.RLock(ctx))
	locked := make(chan error, 1)
	go func() { locked <- w.Lock(ctx) }()
	for w.Writer().Node() == "" && ctx.Err() == nil { // until the writer has queued
		time.Sleep(time.Millisecond)
	}
	fmt.Println("late reader locked out:", errors.Is(late.TryRLock(ctx), rwlock.ErrLocked))

	readToken := r2.Reader().Token()
	_ = r1.RUnlock(ctx)
	_ = r2.RUnlock(ctx)
	fmt.Println("w:", <-locked)
	fmt.Println("writer's token is the largest:", w.Writer().Token() > readToken)
	_ = w.Unlock(ctx)
	// Output:
	// r1: <nil>
	// r2: <nil>
	// late reader locked out: true
	// w: <nil>
	// writer's token is the largest: true
}
