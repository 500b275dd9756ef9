package bench

import (
	"fmt"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/multilock"
)

// multiLocks is how many locks a hold of the multilock rows takes: two,
// the "lock both accounts" case.
const multiLocks = 2

// The multilock beside Curator's InterProcessMultiLock: every contender
// takes the same two locks, path/l0 and path/l1, so the holds exclude
// each other as one mutex's would, at the price of two queues.
func init() {
	name := fmt.Sprintf("multilock-%d", multiLocks)
	Register(Variant{
		Name:     name,
		Describe: fmt.Sprintf("multilock, %d sequential locks in path order, given back newest first", multiLocks),
		Locks:    multiLocks,
		New: func(s *zklocks.Session, path string) (zklocks.Locker, error) {
			m, err := multilock.New(s, multiPaths(path))
			if err != nil {
				return nil, err
			}
			return firstToken{m}, nil
		},
	})
	Register(Variant{
		Name:     "curator-" + name,
		Describe: fmt.Sprintf("Curator InterProcessMultiLock over %d InterProcessMutexes (Java, driver process)", multiLocks),
		Locks:    multiLocks,
		Driver:   curatorDriver,
	})
}

// multiPaths are the paths a multilock hold takes under path, named as
// the Curator driver names them.
func multiPaths(path string) []string {
	paths := make([]string, multiLocks)
	for i := range paths {
		paths[i] = fmt.Sprintf("%s/l%d", path, i)
	}
	return paths
}

// firstToken makes a multilock a zklocks.Locker for the harness: its
// Token is the first lock's, which every hold takes, so it grows from
// hold to hold as a mutex's does.
type firstToken struct{ *multilock.Mutex }

func (f firstToken) Token() int64 { return f.Mutex.Token(f.Paths()[0]) }
