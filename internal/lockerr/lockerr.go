// Package lockerr gives the packages built on the sequential lock
// (reentrant, timeout) its errors under their own names, so that a caller
// of one package never has to know the package underneath.
package lockerr

import (
	"errors"
	"fmt"

	"github.com/zklocks/zklocks/sequential"
)

// Sentinels are a lock package's sentinel errors of the meanings every
// variant shares.
type Sentinels struct {
	BadPath, NilConn, Locked, NotLocked, LockLost, AlreadyLocked error
}

// FromSequential returns err, an error from the sequential package, as an
// error of the package named pkg. An error that matches one of
// sequential's sentinels gets the sentinel of ours with the same meaning
// put in front; any other gets pkg's prefix. Both keep err in the chain,
// so errors.Is holds for our sentinel, sequential's, go-zookeeper's and
// the context's alike. A nil err stays nil.
func FromSequential(pkg string, ours Sentinels, err error) error {
	if err == nil {
		return nil
	}
	for _, p := range []struct{ theirs, ours error }{
		{sequential.ErrBadPath, ours.BadPath},
		{sequential.ErrNilConn, ours.NilConn},
		{sequential.ErrLocked, ours.Locked},
		{sequential.ErrNotLocked, ours.NotLocked},
		{sequential.ErrLockLost, ours.LockLost},
		{sequential.ErrAlreadyLocked, ours.AlreadyLocked},
	} {
		if errors.Is(err, p.theirs) {
			return fmt.Errorf("%w (%w)", p.ours, err)
		}
	}
	return fmt.Errorf("%s: %w", pkg, err)
}
