package naive_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklocks/zklocks"

	"github.com/zklocks/zklocks/naive"
)

func ExampleMutex_Lock() {
	const sessionTimeout = 15 * time.Second
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	session, err := zklocks.Connect(context.Background(), servers, sessionTimeout, zklocks.WithZKLogger(nil))
	if err != nil {
		panic(err)
	}
	defer session.Close()

	// A program uses one fixed path; the random suffix keeps runs of this
	// example against a shared ensemble apart.
	path := "/locks/orders-" + rand.Text()
	m, err := naive.New(session, path)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if err := m.Lock(ctx); err != nil { // waits while another session holds it
		panic(err)
	}
	// The critical section. Hand m.Token() to the resource you write to,
	// so that it can refuse a holder that lost the lock without noticing.
	fmt.Println("holding, token > 0:", m.Token() > 0)
	select {
	case <-m.Done():
		fmt.Println("lost the lock")
	default:
		fmt.Println("still held")
	}
	if err := m.Unlock(ctx); err != nil {
		panic(err)
	}
	fmt.Println("released, token:", m.Token())
	// Output:
	// holding, token > 0: true
	// still held
	// released, token: 0
}

func ExampleMutex_TryLock() {
	const sessionTimeout = 15 * time.Second
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	path := "/locks/reports-" + rand.Text() // random: runs of this example never meet
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Two processes, one session each.
	var mutexes [2]*naive.Mutex
	for i := range mutexes {
		session, err := zklocks.Connect(context.Background(), servers, sessionTimeout, zklocks.WithZKLogger(nil))
		if err != nil {
			panic(err)
		}
		defer session.Close()
		if mutexes[i], err = naive.New(session, path); err != nil {
			panic(err)
		}
	}
	a, b := mutexes[0], mutexes[1]

	if err := a.TryLock(ctx); err != nil {
		panic(err)
	}
	fmt.Println("a holds the lock")

	err := b.TryLock(ctx) // returns at once instead of waiting for a
	fmt.Println("b busy:", errors.Is(err, zklocks.ErrLocked))

	if err := a.Unlock(ctx); err != nil {
		panic(err)
	}
	fmt.Println("b after a's Unlock:", b.TryLock(ctx))
	if err := b.Unlock(ctx); err != nil {
		panic(err)
	}
	// Output:
	// a holds the lock
	// b busy: true
	// b after a's Unlock: <nil>
}
