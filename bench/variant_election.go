package bench

import (
	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/election"
)

// Leader election beside Curator's LeaderLatch: every hold is one term,
// begun by a campaign and ended by a resignation, so the handoff is the
// failover a planned step-down costs.
func init() {
	Register(Variant{
		Name:     "election",
		Describe: "leader election: the lock's queue held for a term, the leader's value in its node",
		Election: true,
		New: func(s *zklocks.Session, path string) (zklocks.Locker, error) {
			return election.New(s, path)
		},
	})
	Register(Variant{
		Name:     "curator-election",
		Describe: "Curator LeaderLatch (Java, driver process): a latch started and awaited per term, closed to step down",
		Election: true,
		Driver:   curatorDriver,
	})
}
