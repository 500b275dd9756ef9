package zklocks

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zkpath"
)

// NodeHolder is a lock that holds through one node of its own whose name
// no other acquisition can have (sequential.Mutex, timeout.Mutex, the two
// sides of rwlock.Mutex): while that node exists, the hold has not been
// given to anyone else. Node returns "" when nothing is held.
//
// naive.Mutex is not one: its node's name is the lock path, which the
// next holder's node shares.
type NodeHolder interface {
	Node() string
}

// SetIfHeld writes data to the node at path (at version; -1 for any) in
// one transaction with a check that h's node still exists, so that the
// servers themselves refuse the write of a holder that has lost its lock.
// It is the fence for state kept in ZooKeeper: a holder paused past its
// session, or cut off, or whose node was deleted, may still believe it
// holds (Done closes late, never early), but ZooKeeper applies every
// transaction at one place in its single order of writes, and after the
// node's deletion in that order every transaction's check fails.
//
// It returns ErrNotLocked when h holds nothing, an error wrapping
// ErrLockLost and zk.ErrNoNode when the check failed, and ZooKeeper's
// error for the write itself otherwise (zk.ErrBadVersion, zk.ErrNoNode
// for a path that does not exist). When ctx ends first it returns ctx's
// error; the transaction may still be applied later, and then only if
// the node still exists at that moment.
func SetIfHeld(ctx context.Context, s *Session, h NodeHolder, path string, data []byte, version int32) (*zk.Stat, error) {
	switch {
	case s == nil:
		return nil, ErrNilSession
	case h == nil:
		return nil, ErrNotLocked
	}
	if err := zkpath.Validate(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPath, err)
	}
	node := h.Node()
	if node == "" {
		return nil, ErrNotLocked
	}
	if err := ctx.Err(); err != nil {
		return nil, err // sent nothing
	}
	type answer struct {
		res []zk.MultiResponse
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := s.conn.Multi(
			&zk.CheckVersionRequest{Path: node, Version: -1}, // -1: exists, at any version
			&zk.SetDataRequest{Path: path, Data: data, Version: version},
		)
		ch <- answer{res, err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if len(a.res) == 2 {
		switch {
		case errors.Is(a.res[0].Error, zk.ErrNoNode):
			return nil, fmt.Errorf("%w: the servers refused the write: the holder's node %s is gone: %w", ErrLockLost, node, zk.ErrNoNode)
		case a.res[1].Error != nil:
			return nil, fmt.Errorf("set %s: %w", path, a.res[1].Error)
		case a.err == nil:
			return a.res[1].Stat, nil
		}
	}
	if a.err == nil {
		a.err = fmt.Errorf("a transaction of 2 operations answered with %d", len(a.res))
	}
	return nil, fmt.Errorf("set %s if held: %w", path, a.err)
}
