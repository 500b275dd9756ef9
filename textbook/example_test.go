package textbook_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/textbook"
)

// The textbook lock runs like any other lock of the module, on a fault-free
// ensemble. It is here to be read and to fail the conformance suite: use
// sequential.Mutex instead.
func ExampleMutex() {
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	session, err := zklocks.Connect(context.Background(), servers, 15*time.Second, zklocks.WithZKLogger(nil))
	if err != nil {
		panic(err)
	}
	defer session.Close()

	m, err := textbook.New(session, "/locks/textbook-"+rand.Text())
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Lock(ctx); err != nil {
		panic(err)
	}
	fmt.Println("holding, token > 0:", m.Token() > 0)
	if err := m.Unlock(ctx); err != nil {
		panic(err)
	}
	select {
	case <-m.Done():
		fmt.Println("released")
	default:
		fmt.Println("Done still open")
	}
	// Output:
	// holding, token > 0: true
	// released
}
