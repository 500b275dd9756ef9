package multilock

import "context"

// lock is the recipe: take every lock of the set, one after the other, in
// the one order all clients agree on, and give back what was taken when
// any step fails. Each lock is a sequential.Mutex, so each step is that
// package's recipe; what this one adds is the order and the rollback.
func (m *Mutex) lock(ctx context.Context, wait bool) error {
	for i := range m.locks {
		// 1. Take the locks in path order (New sorted the paths). Two
		//    clients that want {A, B} and {B, A} both start with A, so
		//    neither can hold B while it waits for A: no cycle of waits,
		//    no deadlock. The wait for one lock also ends when a lock
		//    taken before it is lost (take, in mutex.go).
		err := m.take(ctx, i, wait)

		// 2. A step failed (taken, ctx ended, an earlier lock lost): give
		//    back the locks taken so far, the newest first, and fail.
		if err != nil {
			m.giveBack(ctx, i)
			return err
		}
	}
	// 3. All held. Done closes when any of them ends.
	return nil
}
