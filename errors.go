package zklocks

import (
	"errors"

	"github.com/zklocks/zklocks/internal/liveness"
)

// The errors every lock of this module returns, whatever its variant, so
// that errors.Is(err, zklocks.ErrLocked) holds for a TryLock of any of
// them. The locks wrap them with the package, the operation and the lock
// path ("sequential: trylock /locks/orders: locked by another session:
// ..."), and wrap ZooKeeper's and the context's errors the same way.
var (
	// ErrBadPath: a lock path that ZooKeeper would refuse (not absolute,
	// a trailing slash, an empty or "." or ".." segment, a character it
	// forbids), or the root.
	ErrBadPath = errors.New("invalid lock path")
	// ErrNilSession: a lock made on a nil *Session.
	ErrNilSession = errors.New("nil session")
	// ErrBadOption: an option out of range, or one of another variant.
	ErrBadOption = errors.New("invalid option")
	// ErrLocked: TryLock found another contender first.
	ErrLocked = errors.New("locked by another session")
	// ErrNotLocked: Unlock of a lock that is not held.
	ErrNotLocked = errors.New("lock not held")
	// ErrLockLost: the hold, or the wait for it, ended without Unlock: its
	// node was deleted, its session expired, or the client was cut off
	// long enough for the servers to expire it. errors.Is also finds the
	// reason behind it.
	ErrLockLost = errors.New("lock lost")
	// ErrAlreadyLocked: Lock or TryLock on a lock that holds (and does
	// not re-enter) or is acquiring already.
	ErrAlreadyLocked = errors.New("already locked by this mutex")
	// ErrNilConn: NewSession of a nil connection.
	ErrNilConn = errors.New("nil connection")
	// ErrSessionLost: what Session.Err wraps once a session is over.
	ErrSessionLost = errors.New("session lost")
	// ErrCutOff: the reason of a hold or a session given up because the
	// client could not show, for nine tenths of a session timeout, that
	// the leader still refreshed the session (the servers may expire it
	// any moment now). Session.Err and a lost hold's error wrap it; an
	// expiry wraps zk.ErrSessionExpired and a close zk.ErrClosing instead.
	ErrCutOff = liveness.ErrCutOff
)
