package naive

import (
	"context"
	"fmt"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockq"
)

// lock is the recipe of docs/01-naive.md: the lock is one
// ephemeral node at a fixed path; whoever creates it holds the lock, and
// everybody else watches it and tries again when it goes. The lock node
// (fixed.go) does the rest: the stamp that
// tells our node from another holder's, finding our node after a lost
// answer, the parents, the watch on our node, the guarded delete.
func (m *Mutex) lock(ctx context.Context, n *lockq.Node, wait bool) error {
	for {
		// 1. Create the lock path as an EPHEMERAL node.
		created, err := m.f.Take(ctx, n)
		if err != nil {
			return err
		}

		// 2. Created: the lock is ours.
		if created {
			return nil
		}

		// 3. It exists: another session holds the lock. TryLock stops here.
		if !wait {
			return fmt.Errorf("%w: %s exists", zklocks.ErrLocked, m.base.Path)
		}

		// 4. Set an exists watch on the node and wait for it to fire.
		//    Every waiter watches the same node, so every release wakes
		//    them all, and all but one go back to sleep: the herd.
		if err := m.f.AwaitFree(ctx, n); err != nil {
			return err
		}
		// 5. Try again (step 1).
	}
}
