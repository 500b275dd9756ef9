package semaphore_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/semaphore"
)

// Three workers, each on its own session as three processes would be,
// share two permits: two work at once, the third waits for a permit.
func ExampleSemaphore_Lock() {
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	path := "/semaphores/payments-" + rand.Text() // a random suffix keeps runs of this example apart
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var mu sync.Mutex
	working, most := 0, 0
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session, err := zklocks.Connect(ctx, servers, 15*time.Second, zklocks.WithZKLogger(nil))
			if err != nil {
				fmt.Println(err)
				return
			}
			defer session.Close()
			permit, err := semaphore.New(session, path, 2)
			if err != nil {
				fmt.Println(err)
				return
			}
			if err := permit.Lock(ctx); err != nil {
				fmt.Println(err)
				return
			}
			mu.Lock()
			working++
			most = max(most, working)
			mu.Unlock()
			time.Sleep(50 * time.Millisecond) // the work
			mu.Lock()
			working--
			mu.Unlock()
			if err := permit.Unlock(ctx); err != nil {
				fmt.Println(err)
			}
		}()
	}
	wg.Wait()
	fmt.Println("at most", most, "at once")
	// Output: at most 2 at once
}
