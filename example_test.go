package zklocks_test

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
	"github.com/zklocks/zklocks/rwlock"
	"github.com/zklocks/zklocks/sequential"
)

// One session, many locks: a process opens one Session and makes every
// lock it needs on it, of any variant. The session's keeper proves to
// all of them at once that the leader keeps the session alive, so a
// thousand held locks cost the servers what one does.
func ExampleConnect() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	s, err := zklocks.Connect(ctx, servers, 15*time.Second, zklocks.WithZKLogger(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	// The servers may grant another timeout than the one asked for; the
	// locks use the granted one, which Connect has learned.
	fmt.Println("granted a session timeout:", s.Timeout() > 0)

	base := "/locks/shards-" + rand.Text() // random: runs of this example never meet
	var held []zklocks.Locker
	for i := range 3 {
		m, err := sequential.New(s, fmt.Sprintf("%s/%d", base, i))
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := m.Lock(ctx); err != nil {
			fmt.Println(err)
			return
		}
		held = append(held, m)
	}
	rw, err := rwlock.New(s, base+"/config")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := rw.RLock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	held = append(held, rw.Reader())
	fmt.Println("locks held on one session:", len(held))

	select {
	case <-s.Done(): // every hold on the session ends with it
		fmt.Println("session lost:", s.Err())
	default:
		fmt.Println("session alive")
	}
	for _, l := range held {
		if err := l.Unlock(ctx); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// granted a session timeout: true
	// locks held on one session: 4
	// session alive
}

// A connection the program already has: NewSession wraps it, told the
// session timeout the servers granted (go-zookeeper does not say; ask
// for one within their bounds, 2 to 20 ticks by default, and that is
// the one they grant). Told none, it refuses.
func ExampleNewSession() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const timeout = 15 * time.Second
	conn, _, err := zk.Connect(strings.Split(os.Getenv("ZK_SERVERS"), ","), timeout, zk.WithLogInfo(false))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	_, err = zklocks.NewSession(conn)
	fmt.Println("without the timeout:", errors.Is(err, zklocks.ErrBadOption))

	s, err := zklocks.NewSession(conn, zklocks.WithSessionTimeout(timeout))
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := sequential.New(s, "/locks/reports-"+rand.Text())
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held, token > 0:", m.Token() > 0)
	_ = m.Unlock(ctx)
	// Output:
	// without the timeout: true
	// held, token > 0: true
}

// State kept in ZooKeeper itself can be fenced by the servers: SetIfHeld
// writes only in one transaction with a check that the holder's node
// still exists. A holder that lost its lock, paused or cut off, and does
// not know it yet, has its write refused.
func ExampleSetIfHeld() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	s, err := zklocks.Connect(ctx, servers, 15*time.Second, zklocks.WithZKLogger(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	base := "/locks/fenced-" + rand.Text()
	m, err := sequential.New(s, base)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Lock(ctx); err != nil { // makes /locks too
		fmt.Println(err)
		return
	}
	config := base + "-config"
	if _, err := s.Conn().Create(config, []byte("v1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		fmt.Println(err)
		return
	}
	defer s.Conn().Delete(config, -1)
	if _, err := zklocks.SetIfHeld(ctx, s, m, config, []byte("v2"), -1); err == nil {
		fmt.Println("written while held")
	}
	// The node goes (an operator, here; an expired session does the same)
	// while m still believes it holds.
	if err := s.Conn().Delete(m.Node(), -1); err != nil {
		fmt.Println(err)
		return
	}
	_, err = zklocks.SetIfHeld(ctx, s, m, config, []byte("v3"), -1)
	fmt.Println("refused as lost:", errors.Is(err, zklocks.ErrLockLost))
	_ = m.Unlock(ctx)
	// Output:
	// written while held
	// refused as lost: true
}
