// Package lockerr is the one rule for the errors of every lock package:
// an error returned by a lock's API names the package, the operation and
// the lock path once, in front, and then says what went wrong:
//
//	naive: unlock /locks/orders: lock not held
//	sequential: lock /locks/orders: context deadline exceeded
//	timeout: trylock /locks/orders: locked by another session: /locks/orders/_c_…-lock-0000000007 is first in the queue
//
// The code below the API returns bare causes (a sentinel with detail, a
// step that failed, go-zookeeper's error, ctx's error) and the API wraps
// them once with Wrap. errors.Is sees through the wrapping: to the
// package's sentinels, to go-zookeeper's errors, to context.Canceled and
// context.DeadlineExceeded.
package lockerr

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Error is an error of a lock's API.
type Error struct {
	Pkg  string // the lock package: naive, sequential, reentrant, timeout
	Op   string // the method: new, lock, trylock, unlock, hold, ...
	Path string // the lock path
	Err  error  // the cause
}

func (e *Error) Error() string {
	s := e.Pkg + ": " + e.Op
	if e.Path != "" {
		s += " " + e.Path
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Wrap gives err the prefix of operation op of package pkg on path. A nil
// err stays nil; an error that already carries pkg's prefix is returned
// as it is, so that a method may call another without stuttering.
func Wrap(pkg, op, path string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) && e.Pkg == pkg {
		return err
	}
	return &Error{Pkg: pkg, Op: op, Path: path, Err: err}
}

// Lost makes an error that says the session expired say lost too (lost is
// the package's ErrLockLost): the node went with the session, whichever
// request met the expiry first (a listing, a watch, a lease write), and a
// caller must not have to know which to tell. Other errors pass as they
// are.
func Lost(err, lost error) error {
	if err == nil || errors.Is(err, lost) || !errors.Is(err, zk.ErrSessionExpired) {
		return err
	}
	return fmt.Errorf("%w: %w", lost, err)
}
