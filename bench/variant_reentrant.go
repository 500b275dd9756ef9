package bench

import (
	"context"
	"fmt"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/reentrant"
)

func init() {
	for _, mode := range []reentrant.CountMode{reentrant.InMemory, reentrant.InNode} {
		Register(Variant{
			Name:     "reentrant-" + mode.String(),
			Describe: fmt.Sprintf("sequential recipe plus an owner in the context; re-entry count kept in %s", mode),
			New: func(s *zklocks.Session, path string) (zklocks.Locker, error) {
				return reentrant.New(s, path, reentrant.WithCountMode(mode))
			},
			// Each contender is its own owner: contenders queue, nested
			// calls of one contender re-enter.
			Context: func(ctx context.Context, contender int) context.Context {
				return reentrant.WithOwner(ctx, fmt.Sprintf("bench-contender-%d", contender))
			},
			Reenter: func(ctx context.Context, l zklocks.Locker) error {
				if err := l.Lock(ctx); err != nil {
					return err
				}
				return l.Unlock(ctx)
			},
		})
	}
}
