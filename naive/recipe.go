package naive

import (
	"context"
	"errors"

	"github.com/zklocks/zklocks"
)

// lock is the recipe of notes 000 and 001 §3.3: the lock is one
// ephemeral node at a fixed path; whoever creates it holds the lock, and
// everybody else watches it and tries again when it goes. The hardening
// (a create whose answer was lost, the parents, the watch on our node) is
// in take (node.go), below the recipe.
func (m *Mutex) lock(ctx context.Context, wait bool) (*holding, error) {
	a := newAttempt() // our node's data is its stamp: the path cannot tell whose node it is, the stamp can
	for {
		// 1. Create the lock path as an EPHEMERAL node.
		h, err := m.take(ctx, a)

		// 2. Created: the lock is ours.
		if err == nil {
			return h, nil
		}

		// 3. It exists: another session holds the lock. TryLock stops here.
		if !errors.Is(err, zklocks.ErrLocked) || !wait {
			return nil, err
		}

		// 4. Set an exists watch on the node and wait for it to fire.
		//    Every waiter watches the same node, so every release wakes
		//    them all, and all but one go back to sleep: the herd.
		if err := m.awaitRelease(ctx); err != nil {
			return nil, err
		}
		// 5. Try again (step 1).
	}
}
