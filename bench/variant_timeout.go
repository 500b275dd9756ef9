package bench

import (
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/timeout"
)

// TimeoutLease is the hold lease the timeout variant runs with: the holder
// stamps and renews its node, waiters check it against ZooKeeper's clock.
var TimeoutLease = time.Second

func init() {
	Register(Variant{
		Name:     "timeout",
		Describe: "sequential recipe plus acquire bound and a hold lease (renewed by setData, expiry judged on ZooKeeper's clock)",
		New: func(s *zklocks.Session, path string) (zklocks.Locker, error) {
			return timeout.New(s, path, timeout.WithLease(TimeoutLease))
		},
	})
}
