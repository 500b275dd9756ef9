package sequential_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/zklocks/zklocks"

	"github.com/zklocks/zklocks/sequential"
)

// Two contenders, each on its own session as two processes would be: the
// second waits in the queue until the first releases the lock, and its
// fencing token is larger.
func ExampleMutex_Lock() {
	const sessionTimeout = 15 * time.Second
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	connect := func() *zklocks.Session { // one session, as one process has
		session, err := zklocks.Connect(context.Background(), servers, sessionTimeout, zklocks.WithZKLogger(nil))
		if err != nil {
			panic(err)
		}
		return session
	}
	sessionA := connect()
	defer sessionA.Close()
	sessionB := connect()
	defer sessionB.Close()
	// A program uses one fixed path; the random suffix keeps runs of this
	// example against a shared ensemble apart.
	path := "/locks/orders-" + rand.Text()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	a, err := sequential.New(sessionA, path)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := sequential.New(sessionB, path)
	if err != nil {
		fmt.Println(err)
		return
	}

	if err := a.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("a holds the lock")
	tokenA := a.Token() // hand it to the resource with every write

	bHolds := make(chan error, 1)
	go func() { bHolds <- b.Lock(ctx) }() // b queues behind a

	// ... a's critical section ...
	select {
	case <-a.Done():
		fmt.Println("a lost the lock: stop writing")
	default:
	}
	if err := a.Unlock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := <-bHolds; err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("b holds the lock, with a larger token:", b.Token() > tokenA)
	if err := b.Unlock(ctx); err != nil {
		fmt.Println(err)
	}
	// Output:
	// a holds the lock
	// b holds the lock, with a larger token: true
}

// TryLock does not wait: while someone else is in the queue it fails with
// ErrLocked.
func ExampleMutex_TryLock() {
	const sessionTimeout = 15 * time.Second
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	connect := func() *zklocks.Session { // one session, as one process has
		session, err := zklocks.Connect(context.Background(), servers, sessionTimeout, zklocks.WithZKLogger(nil))
		if err != nil {
			panic(err)
		}
		return session
	}
	sessionA := connect()
	defer sessionA.Close()
	sessionB := connect()
	defer sessionB.Close()
	path := "/locks/reports-" + rand.Text() // random: runs of this example never meet
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	a, _ := sequential.New(sessionA, path)
	b, _ := sequential.New(sessionB, path)

	if err := a.TryLock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	err := b.TryLock(ctx)
	fmt.Println("b while a holds:", errors.Is(err, zklocks.ErrLocked))

	if err := a.Unlock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	err = b.TryLock(ctx)
	fmt.Println("b after a released:", err)
	_ = b.Unlock(ctx)
	// Output:
	// b while a holds: true
	// b after a released: <nil>
}

// Contenders shows the queue of a lock as an inspection tool sees it: who
// holds it, and who waits in which order, from the data each contender
// stored in its node.
func ExampleContenders() {
	const sessionTimeout = 15 * time.Second
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	connect := func() *zklocks.Session { // one session, as one process has
		session, err := zklocks.Connect(context.Background(), servers, sessionTimeout, zklocks.WithZKLogger(nil))
		if err != nil {
			panic(err)
		}
		return session
	}
	session := connect() // the inspection tool's session
	defer session.Close()
	path := "/locks/invoices-" + rand.Text() // random: runs of this example never meet
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var waiting []context.CancelFunc
	var results []chan error
	for i, who := range []string{"alice", "bob", "carol"} {
		c := connect()
		defer c.Close()
		m, _ := sequential.New(c, path, sequential.WithData([]byte(who)))
		if i == 0 {
			if err := m.Lock(ctx); err != nil {
				fmt.Println(err)
				return
			}
			defer m.Unlock(ctx)
			continue
		}
		wctx, stop := context.WithCancel(ctx)
		waiting = append(waiting, stop)
		res := make(chan error, 1)
		results = append(results, res)
		go func() { res <- m.Lock(wctx) }()
		// Let this one queue before the next one comes.
		for {
			q, err := sequential.Contenders(ctx, session, path)
			if err != nil {
				fmt.Println(err)
				return
			}
			if len(q) == i+1 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	q, err := sequential.Contenders(ctx, session, path)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, c := range q {
		role := "waits"
		if i == 0 {
			role = "holds the lock"
		}
		fmt.Printf("%d. %s %s\n", i+1, c.Data, role)
	}

	for i, stop := range waiting { // the waiters give up; their nodes go with them
		stop()
		<-results[i]
	}
	// Output:
	// 1. alice holds the lock
	// 2. bob waits
	// 3. carol waits
}

// WithLogger writes the lock's operation log through log/slog: here a
// hold released by Unlock, then a hold lost because an operator deleted
// its node. The handler keeps only the parts that are the same on every
// run; a real one would keep the node, token, session and timings too.
func ExampleWithLogger() {
	const sessionTimeout = 15 * time.Second
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	connect := func() *zklocks.Session { // one session, as one process has
		session, err := zklocks.Connect(context.Background(), servers, sessionTimeout, zklocks.WithZKLogger(nil))
		if err != nil {
			panic(err)
		}
		return session
	}
	session := connect()
	defer session.Close()
	admin := connect() // an operator's session
	defer admin.Close()
	path := "/locks/payments-" + rand.Text() // random: runs of this example never meet
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	stable := func(_ []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.LevelKey, slog.MessageKey, "lock", "reason":
			return a
		}
		return slog.Attr{} // dropped
	}
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: stable}))
	m, err := sequential.New(session, path, zklocks.WithLogger(logger))
	if err != nil {
		fmt.Println(err)
		return
	}

	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Unlock(ctx); err != nil {
		fmt.Println(err)
		return
	}

	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := admin.Conn().Delete(m.Node(), -1); err != nil { // an operator removes the lock by hand
		fmt.Println(err)
		return
	}
	<-m.Done() // the lost event is written before Done closes
	err = m.Unlock(ctx)
	fmt.Println("Unlock reports the loss:", errors.Is(err, zklocks.ErrLockLost))
	// Output:
	// level=INFO msg=acquire lock=sequential
	// level=INFO msg=release lock=sequential
	// level=INFO msg=acquire lock=sequential
	// level=WARN msg=lost lock=sequential reason=node_deleted
	// Unlock reports the loss: true
}
