package bench

import (
	"fmt"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/semaphore"
)

// semaphorePermits is the number of holders the semaphore rows let in at
// once: two, so that with more contenders than that a release must wake
// exactly one waiter, which is where the designs differ.
const semaphorePermits = 2

// The semaphore beside the peers' own: zklocks' herd-free one (waiters
// watch their predecessor, the first waiter the queue), Curator's
// InterProcessSemaphoreV2 and kazoo's Semaphore (both serialise waiters
// through an inner lock whose holder watches the leases).
func init() {
	name := fmt.Sprintf("semaphore-%d", semaphorePermits)
	Register(Variant{
		Name:     name,
		Describe: fmt.Sprintf("semaphore, %d permits: the first %d nodes hold, the first waiter watches the queue, later ones their predecessor", semaphorePermits, semaphorePermits),
		Permits:  semaphorePermits,
		New: func(s *zklocks.Session, path string) (zklocks.Locker, error) {
			return semaphore.New(s, path, semaphorePermits)
		},
	})
	Register(Variant{
		Name:     "curator-" + name,
		Describe: fmt.Sprintf("Curator InterProcessSemaphoreV2, %d leases (Java, driver process): waiters queue on an inner mutex, its holder watches the leases", semaphorePermits),
		Permits:  semaphorePermits,
		Driver:   curatorDriver,
	})
	Register(Variant{
		Name:     "kazoo-" + name,
		Describe: fmt.Sprintf("kazoo Semaphore, %d leases (Python, driver process): waiters queue on an inner lock, its holder watches the leases", semaphorePermits),
		Permits:  semaphorePermits,
		Driver:   kazooDriver,
	})
}
