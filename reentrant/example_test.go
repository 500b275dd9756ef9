package reentrant_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklocks/zklocks"

	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/sequential"
)

// A call tree that locks at every level: the owner in the context lets the
// inner calls re-enter the hold of the outer ones. Another owner is kept
// out, and cannot unlock what it does not hold.
func ExampleWithOwner() {
	const sessionTimeout = 15 * time.Second
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	session, err := zklocks.Connect(context.Background(), servers, sessionTimeout, zklocks.WithZKLogger(nil))
	if err != nil {
		panic(err)
	}
	defer session.Close()

	// A program uses one fixed path; the random suffix keeps runs of this
	// example against a shared ensemble apart.
	path := "/locks/jobs-" + rand.Text()
	m, err := reentrant.New(session, path)
	if err != nil {
		panic(err)
	}
	job := reentrant.WithOwner(context.Background(), "job-42")
	other := reentrant.WithOwner(context.Background(), "job-43")

	var work func(depth int)
	work = func(depth int) {
		if err := m.Lock(job); err != nil {
			fmt.Println(err)
			return
		}
		defer m.Unlock(job)
		fmt.Printf("depth %d: count %d\n", depth, m.Count(job))
		if depth < 3 {
			work(depth + 1)
			return
		}
		fmt.Println("job-43 TryLock, locked:", errors.Is(m.TryLock(other), zklocks.ErrLocked))
		fmt.Println("job-43 Unlock, not the owner:", errors.Is(m.Unlock(other), reentrant.ErrNotOwner))
		cs, _ := sequential.Contenders(context.Background(), session, path)
		h, _ := reentrant.ParseHolder(cs[0].Data)
		fmt.Printf("%d node, held by %s, count kept in %s\n", len(cs), h.Owner, h.Mode)
	}
	work(1)
	fmt.Println("one Unlock too many, not held:", errors.Is(m.Unlock(job), zklocks.ErrNotLocked))

	// Output:
	// depth 1: count 1
	// depth 2: count 2
	// depth 3: count 3
	// job-43 TryLock, locked: true
	// job-43 Unlock, not the owner: true
	// 1 node, held by job-42, count kept in memory
	// one Unlock too many, not held: true
}

// With InNode the count is written into the node at every step, where any
// client can read it.
func ExampleWithCountMode() {
	const sessionTimeout = 15 * time.Second
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	session, err := zklocks.Connect(context.Background(), servers, sessionTimeout, zklocks.WithZKLogger(nil))
	if err != nil {
		panic(err)
	}
	defer session.Close()

	path := "/locks/jobs-" + rand.Text() // random: runs of this example never meet
	m, err := reentrant.New(session, path, reentrant.WithCountMode(reentrant.InNode))
	if err != nil {
		panic(err)
	}
	ctx := reentrant.WithOwner(context.Background(), "job-7")
	show := func(step string) {
		cs, _ := sequential.Contenders(context.Background(), session, path)
		if len(cs) == 0 {
			fmt.Printf("%-9s no node\n", step)
			return
		}
		h, _ := reentrant.ParseHolder(cs[0].Data)
		fmt.Printf("%-9s node says %s holds it, count %d\n", step, h.Owner, h.Count)
	}
	for range 3 {
		_ = m.Lock(ctx)
		show("Lock")
	}
	for range 3 {
		_ = m.Unlock(ctx)
		show("Unlock")
	}

	// Output:
	// Lock      node says job-7 holds it, count 1
	// Lock      node says job-7 holds it, count 2
	// Lock      node says job-7 holds it, count 3
	// Unlock    node says job-7 holds it, count 2
	// Unlock    node says job-7 holds it, count 1
	// Unlock    no node
}
