package bench

import (
	"fmt"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/rwlock"
)

// The read-write lock, with readers and writers mixed on one path: in
// rwlock-90r nine contenders in ten read, in rwlock-50r every other one
// (contender 0 always writes, so N = 1 is one writer). Beside sequential,
// which makes every contender wait its turn, they show what sharing the
// lock among readers buys on the same work.
func init() {
	for _, mix := range []struct {
		name  string
		every int // every this many contenders, one writes
	}{{"rwlock-90r", 10}, {"rwlock-50r", 2}} {
		Register(Variant{
			Name:     mix.name,
			Describe: fmt.Sprintf("read-write lock, %d%% readers: a reader waits only for the writers ahead of it", 100-100/mix.every),
			New: func(s *zklocks.Session, path string) (zklocks.Locker, error) {
				m, err := newRW(s, path)
				if err != nil {
					return nil, err
				}
				return m.Writer(), nil
			},
			Reader: func(s *zklocks.Session, path string) (zklocks.Locker, error) {
				m, err := newRW(s, path)
				if err != nil {
					return nil, err
				}
				return m.Reader(), nil
			},
			Readers: func(contender int) bool { return contender%mix.every != 0 },
		})
	}
}

func newRW(s *zklocks.Session, path string) (*rwlock.Mutex, error) {
	return rwlock.New(s, path)
}
