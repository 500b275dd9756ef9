package election_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/election"
)

// Two schedulers, each on its own session as two processes would be,
// campaign for one election; a third process observes who leads. The
// first leads until it resigns, and then the second does.
func ExampleElection_Campaign() {
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	path := "/elections/scheduler-" + rand.Text() // a random suffix keeps runs of this example apart
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var sessions []*zklocks.Session
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	candidate := func() *election.Election {
		session, err := zklocks.Connect(ctx, servers, 15*time.Second, zklocks.WithZKLogger(nil))
		if err != nil {
			panic(err)
		}
		sessions = append(sessions, session)
		e, err := election.New(session, path)
		if err != nil {
			panic(err)
		}
		return e
	}
	a, b, watcher := candidate(), candidate(), candidate()

	if err := a.Campaign(ctx, []byte("scheduler-a")); err != nil {
		fmt.Println(err)
		return
	}
	terms := watcher.Observe(ctx)
	fmt.Println("leader:", string((<-terms).Value))

	bLeads := make(chan error, 1)
	go func() { bLeads <- b.Campaign(ctx, []byte("scheduler-b")) }()
	aTerm := a.Term()
	if err := a.Resign(ctx); err != nil {
		fmt.Println(err)
	}
	if err := <-bLeads; err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("leader:", string((<-terms).Value))
	fmt.Println("b's term is later than a's:", b.Term() > aTerm)
	_ = b.Resign(ctx)
	// Output:
	// leader: scheduler-a
	// leader: scheduler-b
	// b's term is later than a's: true
}
