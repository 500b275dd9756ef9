package multilock_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/multilock"
)

// Two transfers between the same two accounts, in opposite directions,
// on two sessions as two processes would run them. Each locks both
// accounts; whatever order each lists them in, the Mutexes take them in
// path order, so neither can end up waiting for the other forever.
func ExampleMutex_Lock() {
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	connect := func() *zklocks.Session {
		s, err := zklocks.Connect(context.Background(), servers, 15*time.Second, zklocks.WithZKLogger(nil))
		if err != nil {
			panic(err)
		}
		return s
	}
	sessionX, sessionY := connect(), connect()
	defer sessionX.Close()
	defer sessionY.Close()
	root := "/locks/bank-" + rand.Text() // a random root keeps runs of this example apart
	alice, bob := root+"/alice", root+"/bob"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	transfer := func(s *zklocks.Session, from, to string) error {
		m, err := multilock.New(s, []string{from, to})
		if err != nil {
			return err
		}
		if err := m.Lock(ctx); err != nil {
			return err
		}
		defer m.Unlock(ctx)
		// Both accounts are ours: write each with its own token.
		_, _ = m.Token(from), m.Token(to)
		return nil
	}
	done := make(chan error, 2)
	go func() { done <- transfer(sessionX, alice, bob) }()
	go func() { done <- transfer(sessionY, bob, alice) }()
	for range 2 {
		if err := <-done; err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("both transfers done")
	// Output: both transfers done
}
