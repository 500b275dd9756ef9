package rwlock_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklocks/zklocks"

	"github.com/zklocks/zklocks/rwlock"
)

// Two readers share the lock; a writer waits until both are gone, and
// TryRLock fails while it waits, so a stream of readers can not starve it.
func ExampleMutex_RLock() {
	const sessionTimeout = 15 * time.Second
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	// A program uses one fixed path; the random suffix keeps runs of this
	// example against a shared ensemble apart.
	path := "/locks/catalog-" + rand.Text()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var sessions []*zklocks.Session
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	contender := func() *rwlock.Mutex { // one session, as one process has
		session, err := zklocks.Connect(context.Background(), servers, sessionTimeout, zklocks.WithZKLogger(nil))
		if err != nil {
			panic(err)
		}
		sessions = append(sessions, session)
		m, err := rwlock.New(session, path)
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
	fmt.Println("late reader locked out:", errors.Is(late.TryRLock(ctx), zklocks.ErrLocked))

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
