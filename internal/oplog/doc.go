// Package oplog writes the operation log of the locks: one log/slog record
// per acquire, wait, release, loss, eviction and abandoned attempt, so that
// an operator can follow who held a lock, for how long, who waited behind
// whom, and why a hold ended. docs/oplog.md documents every event and key,
// what each variant adds, and how to read a real run.
//
// Every variant takes the caller's *slog.Logger through its WithLogger
// option. Without one the log is off: the variants keep a nil *Log, every
// method of a nil *Log or *Hold returns at once, and their arguments are
// plain strings, integers and times, so nothing is allocated and no
// attribute is built (TestOffAllocatesNothing).
//
// # Events
//
// The message is the event's name; the names, levels and keys are stable.
// Every record also carries lock (the variant) and path (the lock path);
// the reentrant lock adds owner. Keys in brackets are left out when they
// do not apply.
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
// # Once per hold, whichever layer sees it
//
// A loss can be seen by the watch on the node (at once), by Unlock
// (later), and in the reentrant and timeout locks by a failed count write
// or an eviction. Each record is written once, by whichever sees the event
// first, and a Hold ends once: a hold lost and then unlocked logs lost and
// no release.
package oplog
