package timeout_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"

	"github.com/zklocks/zklocks/timeout"
)

// A waiter that may wait at most 200ms gives up with ErrWaitTimeout, and
// its node is gone when LockTimeout returns.
func ExampleMutex_LockTimeout() {
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
	ctx := context.Background()
	// A program uses one fixed path; the random suffix keeps runs of this
	// example against a shared ensemble apart.
	path := "/locks/orders-" + rand.Text()

	a, _ := timeout.New(sessionA, path)
	b, _ := timeout.New(sessionB, path)
	if err := a.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	err := b.LockTimeout(ctx, 200*time.Millisecond)
	fmt.Println("b gave up:", errors.Is(err, timeout.ErrWaitTimeout))
	_, _ = sessionA.Conn().Sync(path) // b deleted its node through another member
	kids, _, _ := sessionA.Conn().Children(path)
	fmt.Println("nodes left:", len(kids), "(a's)")
	_ = a.Unlock(ctx)
	// Output:
	// b gave up: true
	// nodes left: 1 (a's)
}

// A holder that stops renewing its lease is evicted by the next contender
// when the lease has run out by ZooKeeper's clock, although its session is
// alive. Here the stalled holder is a node made by hand, the way a holder
// of this package leaves its node: "lease=<ms>ms held".
func ExampleWithLease() {
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
	ctx := context.Background()
	path := "/locks/reports-" + rand.Text() // random: runs of this example never meet
	acl := zk.WorldACL(zk.PermAll)

	// The stalled holder: first in the queue, lease 500ms, never renewed.
	for _, p := range []string{"/locks", path} {
		_, _ = sessionA.Conn().Create(p, nil, 0, acl)
	}
	stalled, err := sessionA.Conn().Create(path+"/_c_0123456789abcdef0123456789abcdef-lock-", []byte("lease=500ms held"),
		zk.FlagEphemeral|zk.FlagSequence, acl)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, st, _ := sessionA.Conn().Get(stalled)
	staleToken := st.Czxid

	b, _ := timeout.New(sessionB, path, timeout.WithLease(time.Second))
	if err := b.Lock(ctx); err != nil { // waits about 500ms, then evicts
		fmt.Println(err)
		return
	}
	fmt.Println("b evicted the stalled holder:", b.Evictions())
	fmt.Println("b's token is larger:", b.Token() > staleToken)
	fmt.Println("the stalled holder's session is alive:", sessionA.Conn().State() == zk.StateHasSession)
	_ = b.Unlock(ctx)
	_ = sessionA.Conn().Delete(path, -1)
	// Output:
	// b evicted the stalled holder: 1
	// b's token is larger: true
	// the stalled holder's session is alive: true
}
