package sequential

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
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
// zklocks.ErrNotLocked when nobody holds the lock. It writes the request
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
	c := zkop.New(s.Conn(), s.Timeout())
	q := lockq.New(c, path, lockq.Config{})
	for {
		head, err := q.Head(ctx) // after a sync
		switch {
		case err != nil:
			return fail(err)
		case head == "":
			return fail(fmt.Errorf("%w: nobody holds it", zklocks.ErrNotLocked))
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
