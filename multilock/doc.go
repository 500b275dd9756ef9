// Package multilock holds several locks at once, as one, without
// deadlock: "move money from account A to account B" needs both
// accounts' locks, and two transfers in opposite directions must not end
// up each holding one and waiting for the other.
//
// It is a rung beyond the study notes, which lock one resource at a time.
// Curator's InterProcessMultiLock is the peer; it takes its locks in the
// order the caller lists them, which is exactly what deadlocks below.
//
// # The recipe
//
// New sorts the set's paths once. Lock, for the set {A, B}:
//
//  1. Take each lock, a sequential.Mutex, in path order: A, then B. Each
//     step is the sequential recipe (a node in the lock's queue, a watch
//     on the node just ahead).
//  2. When a step fails (TryLock finds a lock taken, ctx ends, or a lock
//     taken before is lost while we wait for a later one), release the
//     locks taken so far, the newest first, and fail: a failed Lock holds
//     nothing.
//  3. All taken: the set is held. Done closes as soon as any of its locks
//     ends; Unlock releases them in the reverse order.
//
// # Why one order prevents deadlock
//
// A deadlock is a cycle of waits: X holds A and waits for B while Y holds
// B and waits for A. With one global order, every client waits only for a
// lock that comes after every lock it holds. Follow any chain of waits
// and the paths grow strictly along it, so it can never come back to
// where it started: there is no cycle. TestOppositeOrders shows both
// halves: the two orders taken as listed wait until their deadline, the
// same two sets taken by this package complete twenty rounds each.
//
// The order is the byte order of the paths, the same in every process
// and every language: a Curator or kazoo client that sorts the same paths
// the same way takes part safely. One that does not can still deadlock
// with us; the order is a protocol, not something the servers enforce.
//
// # Guarantees and failure modes
//
//   - While Done is open, each lock of the set is held as a
//     sequential.Mutex holds it (see that package for what "held" means
//     when a client is cut off).
//   - The set has no single fencing token: each resource is fenced by the
//     token of the lock that guards it, Token(path).
//   - Losing one lock loses the set: Done closes, Err names the path, and
//     the Unlock that follows reports zklocks.ErrLockLost and releases the
//     rest. The locks still held stay held until that Unlock; a holder
//     that wants them released at once calls Unlock when Done closes.
//   - Taking the locks one by one costs one acquisition per lock, so a
//     Lock of n free locks is about n sequential Locks in a row. There is
//     no atomic "all or nothing" on the servers: for a moment the set is
//     partly held, and another client asking for one of its locks waits.
//     What the recipe guarantees is that the wait ends.
//   - The locks of one Mutex share its session, so one session expiry
//     loses all of them at once.
//
// # Through the code
//
// A Lock call goes:
//
//	Mutex.Lock             multilock/mutex.go   prefixes errors
//	Mutex.acquire          multilock/mutex.go   one Lock or Unlock at a time; then Done's watch
//	Mutex.lock             multilock/recipe.go  the steps above
//	Mutex.take             multilock/mutex.go   step 1, one lock, cut short by an earlier loss
//	whileHeld              multilock/mutex.go   that cut: the held locks' Done, through watchAny
//	sequential.Mutex.Lock  sequential/mutex.go  each lock's own path (see that package's doc)
//	Mutex.giveBack         multilock/mutex.go   step 2, the rollback, newest first
//	watchAny               multilock/mutex.go   step 3: Done closes when any lock's Done does
//
// and Unlock: Mutex.Unlock, which stops Done's watch and calls
// sequential.Mutex.Unlock for each lock held, the last taken first.
//
// New(s, paths, opts...) makes the Mutex on a *zklocks.Session; it fails
// with zklocks.ErrBadPath for no paths, an invalid one or one listed
// twice, and sends nothing. The options are sequential's, given to every
// lock of the set.
package multilock
