// Package multilock holds several locks at once, as one, without
// deadlock: "move money from account A to account B" needs both
// accounts' locks, and two transfers in opposite directions must not end
// up each holding one and waiting for the other. Taking every set in one
// global order rules that out; docs/08-multilock.md teaches why.
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
// # Guarantees
//
//   - No deadlock among clients that take their locks in path order
//     (byte order, the same in every language): the order is a protocol,
//     not something the servers enforce.
//   - While Done is open, each lock is held as a sequential.Mutex holds
//     it; each resource is fenced by its own lock's Token(path).
//
// # Failure modes
//
//   - Losing one lock loses the set: Done closes, Err names the path, and
//     the next Unlock reports zklocks.ErrLockLost and releases the rest,
//     which stay held until then.
//   - The set is never taken atomically: a Lock of n locks costs n
//     acquisitions in a row, and another client may wait meanwhile.
//   - One session holds every node, so one expiry loses the whole set.
//   - Curator's InterProcessMultiLock takes its locks in the order it is
//     given: one given these paths unsorted can deadlock with us.
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
package multilock
