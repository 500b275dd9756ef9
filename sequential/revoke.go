package sequential

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/liveness"
	"github.com/zklocks/zklocks/internal/lockerr"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

// Cooperative revocation, the recipes page's revocable lock: a client
// asks the holder to give the lock up by writing a request into the
// holder's node; the holder sees it through the data watch it keeps on
// its node anyway (ZooKeeper's DataTree.setData triggers NodeDataChanged
// on the node's data watches; Mutex.Revoked) and decides when to Unlock. Nothing is
// taken by force: a holder that ignores the request keeps the lock. The
// timeout lock's eviction is the forced kind, for a holder that can no
// longer answer.

// Revoked returns a channel that is closed when a client has asked the
// current hold to give the lock up (Revoke, zklocks revoke, or Curator's
// Revoker.attemptRevoke: the request is the same bytes). Asking ends
// nothing: Done still closes only when the hold ends. When the lock is not
// held it returns nil, a channel that never closes.
//
// The request replaces the node's data, so Contenders shows it instead
// of what WithData stored.
func (m *Mutex) Revoked() <-chan struct{} { return m.slot.Revoked() }

// Revoke asks the current holder of the lock at path to give it up, and
// returns the holder's node. It fails with an error wrapping
// zklocks.ErrNotLocked when nobody holds the lock, and with one wrapping
// zklocks.ErrBadPath when path is not a mutex's queue (a naive lock's
// node, a read-write lock's or an election's queue), whose holder cannot
// see a request. Every mutex of this module (sequential, reentrant,
// timeout, semaphore) reads the request as a request: a holder that
// writes its own node (a lease's renewal, a count) writes over it and
// keeps the lock. It writes the request
// at the version it read, so that it never overwrites what the holder
// wrote in between (it reads again and retries then); a holder that has
// just released is not asked, and the next holder is not asked either.
func Revoke(ctx context.Context, s *zklocks.Session, path string) (string, error) {
	fail := func(err error) (string, error) { return "", lockerr.Wrap("sequential", "revoke", path, err) }
	if s == nil {
		return fail(zklocks.ErrNilSession)
	}
	if err := zkpath.Validate(path); err != nil {
		return fail(fmt.Errorf("%w: %v", zklocks.ErrBadPath, err))
	}
	c := zkop.New(s.Conn(), liveness.SessionClock(s))
	q := lockq.New(c, path, lockq.Config{})
	for {
		head, err := q.Head(ctx) // after a sync
		switch {
		case err != nil:
			return fail(err)
		case head == "":
			return fail(nobodyOrNoQueue(ctx, c, path))
		case !isMutexNode(head):
			// A read-write lock's first node is one of several holders, an
			// election's carries the leader's value: neither reads a
			// request in its data.
			return fail(fmt.Errorf("%w: %s is not a mutex's queue node; only a mutex's holder can be asked to give the lock up", zklocks.ErrBadPath, head))
		}
		data, stat, err := c.Get(ctx, head)
		if errors.Is(err, zk.ErrNoNode) {
			return fail(fmt.Errorf("%w: %s released it meanwhile", zklocks.ErrNotLocked, head))
		}
		if err != nil {
			return fail(err)
		}
		if hold.IsRevokeRequest(data) {
			return head, nil // asked already
		}
		_, err = c.Set(ctx, head, hold.RevokeRequest, stat.Version)
		switch {
		case err == nil:
			return head, nil
		case errors.Is(err, zk.ErrNoNode):
			return fail(fmt.Errorf("%w: %s released it meanwhile", zklocks.ErrNotLocked, head))
		case errors.Is(err, zk.ErrBadVersion):
			continue // the holder wrote its node meanwhile: read it again
		default:
			return fail(err)
		}
	}
}

// isMutexNode reports whether a queue node is a mutex contender's: ours,
// Curator's and go-zookeeper's names carry "lock-", kazoo's "__lock__".
func isMutexNode(path string) bool {
	name := path[strings.LastIndexByte(path, '/')+1:]
	return strings.Contains(name, "lock-") || strings.Contains(name, "__lock__")
}

// nobodyOrNoQueue says why a lock path has no head: nobody holds it, or
// the path is a lock node itself (the naive lock's), which has no queue
// and whose holder keeps no watch for a request.
func nobodyOrNoQueue(ctx context.Context, c *zkop.Client, path string) error {
	_, stat, err := c.Get(ctx, path)
	if err == nil && stat.EphemeralOwner != 0 {
		return fmt.Errorf("%w: %s is a lock node itself (the naive lock's), not a queue; its holder cannot be asked", zklocks.ErrBadPath, path)
	}
	return fmt.Errorf("%w: nobody holds it", zklocks.ErrNotLocked)
}
