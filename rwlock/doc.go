// Package rwlock is a read-write lock on ZooKeeper: many readers or one
// writer at a time, in the order they came. It is the "Shared Locks"
// recipe of ZooKeeper's recipes page on the sequential queue, the lock
// Curator ships as InterProcessReadWriteLock and kazoo as ReadLock and
// WriteLock; recipe.go is sequential's recipe with the changes marked
// "rwlock:". docs/07-rwlock.md teaches it and argues each choice.
//
// Lock and Unlock take the write lock, RLock and RUnlock the read lock;
// Writer and Reader give each side as a zklocks.Locker.
//
// # The recipe
//
//  1. Join: create <path>/_c_<guid>-__WRIT__ (a writer) or
//     <path>/_c_<guid>-__READ__ (a reader) as EPHEMERAL_SEQUENTIAL, so
//     readers and writers queue in one line.
//  2. List the children and sort them by sequence number.
//  3. Keep only the nodes ahead of ours that block us: for a writer
//     every node, for a reader only the writers. None: the lock is ours.
//  4. Otherwise set a data watch on the closest of them, the last one
//     ahead of our node, and wait.
//  5. When it is deleted: if it was the only one that blocked us, the
//     lock is ours with no further request; otherwise list again (2).
//  6. Unlock and RUnlock delete our node.
//
// # Guarantees
//
//   - No herd: a writer's release wakes the readers right behind it, a
//     reader's at most the writer behind it.
//   - One line for both kinds: a reader behind a waiting writer waits for
//     it, so readers can not starve a writer.
//   - A downgrade (RLock while holding the write lock) lets no other
//     writer in; it fails with ErrDowngrade while another writer waits.
//   - All package sequential says of lost answers, expiry, Done, Token.
//
// # Failure modes
//
//   - An upgrade (Lock while reading) fails with ErrUpgrade.
//   - A paused reader or writer wakes up believing it holds: fence the
//     writes with Token.
//   - Curator honours our nodes; kazoo's reader can deadlock beside
//     writers, and Curator and kazoo must not share a path.
//
// # Through the code
//
// A Lock or RLock call goes:
//
//	Mutex.Lock, RLock      rwlock/mutex.go         the writer's or the reader's Side
//	Side.Lock              rwlock/side.go          prefixes errors
//	Side.acquire           rwlock/side.go          the recipe for this side; a downgrade does not wait
//	lockq.Slot.TakeIf      internal/lockq/slot.go  idle -> acquiring -> held, the log
//	Mutex.admitLocked      rwlock/side.go          under the lock: both sides' state, a downgrade noted
//	Mutex.lock             rwlock/recipe.go        sequential's steps, waiting only for Side.blocks
//	lockq.Queue            internal/lockq          join, line (Line.Only), await the predecessor
//	Mutex.writeHoldLasted  rwlock/side.go          a downgrade: our write node lived until our reader's
//
// and Unlock or RUnlock: Mutex.Unlock or RUnlock, Side.Unlock,
// lockq.Slot.Unlock, lockq.Queue.Release (leave.go: our node deleted by
// name, or later when it can not be sent now).
package rwlock
