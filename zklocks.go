package zklocks

import "context"

// Locker is the method set shared by every lock in this module.
//
// Lock blocks until the lock is held, ctx is done, or an error makes
// waiting pointless; on any failure nothing of the caller is left on the
// ensemble. TryLock does not wait for another holder: it fails with
// ErrLocked instead. Unlock releases a held lock and fails with
// ErrNotLocked when there is nothing to release.
//
// Token returns the fencing token of the current hold: the czxid of the
// znode that represents it. Tokens of successive holds on one path grow
// strictly, so a resource that rejects writes carrying a token smaller than
// the largest it has seen is safe from a holder that lost the lock without
// noticing. Token returns the token of the current hold — also after that
// hold was lost, until Unlock — and 0 when there is no hold: a holder that
// goes on writing after a loss it has not noticed presents its old token,
// which the resource refuses once a newer holder has used its own.
//
// Every error of Lock, TryLock and Unlock (and of the constructors) reads
// the same in every variant: the package, the operation and the lock path
// once, then what went wrong ("sequential: lock /locks/orders: context
// deadline exceeded"). errors.Is finds this package's sentinels in it
// (ErrLocked, ErrLockLost, ...: one set for every variant), the
// go-zookeeper error behind it, and context.Canceled or
// context.DeadlineExceeded when ctx ended the call.
//
// Done returns a channel that is closed when the current hold ends, either
// because Unlock released it or because it was lost (node deleted, session
// expired, or cut off from the ensemble long enough that the servers may
// expire the session: Done closes before they can, as long as the process
// runs). When the lock is not held Done returns a closed channel. A closed
// Done is a hint, not a guarantee: a paused process runs no code, and can
// go on believing it holds the lock after the servers gave it away.
//
// The cut-off case runs on one clock per session (see Session): the
// latest moment at which the client can prove that the leader refreshed
// its session (an
// answered request, once a later request through the leader, sent a
// quarter of a session timeout after the first one's answer, is answered
// too; see internal/liveness). A hold ends nine tenths of a session
// timeout after that moment, connected or not. The clock trails the
// present by a quarter to three eighths of a session timeout, so a hold
// rides out a disconnection of about half of one. On a Session made by
// Connect the first hold starts at once; on one made by NewSession it
// waits for the clock's first proof, up to about a quarter of a session
// timeout. The rule assumes the servers grant sessions of at least two
// ticks, their default.
type Locker interface {
	Lock(ctx context.Context) error
	TryLock(ctx context.Context) error
	Unlock(ctx context.Context) error
	Token() int64
	Done() <-chan struct{}
}

// Stats counts the ZooKeeper traffic one lock caused from the client side.
// The bench sets these beside the servers' own counters, so the herd effect
// can be seen from both ends of the wire.
type Stats struct {
	// Requests is the number of requests the lock sent to ZooKeeper.
	Requests int64
	// Notifications is the number of watch events the lock received.
	Notifications int64
}
