// Package zklocks holds what every lock in this module has in common: the
// Session the locks are made on, the Locker contract, the options and the
// sentinel errors they share, and the Stats each lock keeps about its own
// traffic.
//
// A lock is made on a Session: a ZooKeeper connection, the session
// timeout the servers granted it, and the one clock of its session that
// every lock on it shares. Connect opens the connection and learns the
// granted timeout; NewSession wraps a connection you already have, and
// must be told it (WithSessionTimeout). Every variant's constructor then
// takes the Session, a lock path and Options:
//
//	s, err := zklocks.Connect(ctx, servers, 15*time.Second)
//	...
//	defer s.Close()
//	m, err := sequential.New(s, "/locks/orders", zklocks.WithLogger(logger))
//
// Any number of locks, of any variant, can share one Session, and holding
// them idle costs what holding one does (a timeout lock's lease aside,
// which each hold renews): each hold waits on the session's epoch
// (Session.Done), which one keeper per connection times.
//
// The locks themselves live in the sub-packages, one recipe each, in the
// order a reader should study them (docs/README.md maps the chapters):
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
//   - rwlock: the sequential queue shared by readers and writers; a
//     reader waits only for the writers ahead of it.
//   - multilock: several sequential locks held as one, taken in path
//     order so that two sets can not deadlock.
//   - semaphore: the sequential queue with N holders at once; a release
//     still wakes a few contenders, not every waiter.
//   - election: the sequential queue held for a term; candidates and
//     observers learn who leads, with the term as a fencing token.
//
// Every variant but multilock is a Locker (rwlock through its two sides,
// Writer and Reader; election with Lock as a Campaign with no value), so a
// diff between two packages shows only the recipe change, and
// internal/locktest runs one conformance suite against each of them.
// multilock's Token takes the path whose token it is. Their errors wrap
// the sentinels declared here (ErrLocked, ErrLockLost, ...), so
// errors.Is(err, zklocks.ErrLocked) holds whatever the variant.
package zklocks
