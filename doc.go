// Package zklocks holds what every lock in this module has in common: the
// Locker contract and the Stats each lock keeps about its own traffic.
//
// The locks themselves live in the sub-packages, one recipe each, in the
// order a reader should study them:
//
//   - naive: one ephemeral node at the lock path; losers watch it with
//     exists and retry. Correct, but every release wakes every waiter
//     (the herd effect).
//   - sequential: one ephemeral-sequential child per contender; each
//     waiter watches only its predecessor. FIFO and herd-free.
//   - reentrant: the sequential recipe plus an owner carried in the
//     context, so the holder can lock again without queueing behind itself.
//   - timeout: the sequential recipe plus an acquire bound and a hold
//     lease that waiters judge with ZooKeeper's clock, not their own.
//
// All four have the same method set, so a diff between two packages shows
// only the recipe change, and internal/locktest runs one conformance suite
// against each of them.
package zklocks
