// Package oplog writes the operation log of the locks: one log/slog record
// per acquire, wait, release, loss, eviction and abandoned attempt, so that
// an operator can follow who held a lock, for how long, who waited behind
// whom, and why a hold ended (docs/oplog.md).
//
// Every variant takes the caller's *slog.Logger through its WithLogger
// option. Without one the log is off: the variants keep a nil *Log, every
// method of a nil *Log or *Hold returns at once, and their arguments are
// plain strings, integers and times, so nothing is allocated and no
// attribute is built (TestOffAllocatesNothing). A logger whose handler does
// not enable a level costs one Enabled call per event of that level (and
// each acquisition its small Hold).
//
// # Events
//
// The message is the event's name; the names, levels and keys are stable.
// Every record also carries lock (the variant: naive, sequential,
// reentrant, timeout) and path (the lock path); the reentrant lock adds
// owner to every record of an owner's hold or attempt.
//
//	message  level  when                                    keys
//	-------  -----  --------------------------------------  -----------------------------------------
//	acquire  INFO   Lock or TryLock took the lock            node token session waited
//	wait     DEBUG  a waiter set a watch and went to sleep   [node] watch [ahead] session
//	                (reentrant: an owner waits in-process    behind
//	                behind another owner of the same Mutex)
//	release  INFO   Unlock released a live hold              node token held [err]
//	lost     WARN   a hold ended without Unlock              node token held reason err
//	evict    WARN   a waiter deleted a holder whose lease    node victim victim_token lease overdue
//	                ran out (timeout)
//	abandon  INFO   Lock or TryLock failed after it began    [node] waited err
//	reenter  DEBUG  the holding owner locked again           node token count
//	                (reentrant)
//	exit     DEBUG  an Unlock that leaves the hold held      node token count
//	                (reentrant)
//
// Keys in brackets are left out when they do not apply. The values:
//
//   - node: the full path of the contender's own lock node (for the naive
//     lock, the lock path itself). A naive waiter has no node.
//   - token: the hold's fencing token, the node's czxid (what Token returns).
//   - session: the ZooKeeper session, as 0x-prefixed hex (what zkCli and
//     the servers' logs print).
//   - waited: from the call of Lock to the event; held: from acquire to
//     the event.
//   - watch: the node the waiter watches: the lock path (naive, where every
//     waiter watches it: one wait event per waiter per release, the herd
//     effect in the log) or the node just ahead in the queue.
//   - ahead: how many contenders are ahead in the queue.
//   - behind: the owner this owner waits for (reentrant).
//   - reason: why a hold was lost, one of node_deleted, session_expired,
//     cut_off (no contact with the ensemble for longer than the session
//     timeout), evicted and lease_expired (timeout), count_write (the
//     reentrant lock's InNode count could not be written), or error.
//   - err: the error the method returns (or, for lost, the cause).
//   - victim, victim_token: the evicted holder's node and token; lease: its
//     lease; overdue: how long past its lease, by ZooKeeper's clock, it was
//     evicted.
//   - count: the re-entry depth after the call.
//
// # Once per hold, whichever layer sees it
//
// A loss can be seen by the watch on the node (at once) and by Unlock
// (later); the reentrant and timeout locks see theirs too (a failed count
// write, an eviction). Each record is written once, by whichever sees the
// event first. A Hold ends once: the first of release and
// lost is written, later ones are dropped. A hold lost and
// then unlocked therefore logs lost and no release.
//
// Not logged: a TryLock that finds the lock taken (ErrLocked), and calls
// that fail before they begin (a done ctx, a lock already held by the
// same Mutex, no owner in ctx).
package oplog
