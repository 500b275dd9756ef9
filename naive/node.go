package naive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

// The hardening below the recipe (recipe.go): step 1's create, as it
// must be done on a real network.

// attempt is what one Lock or TryLock call remembers across its creates.
type attempt struct {
	stamp       []byte // the data of every create of the call
	unsure      bool   // a create had an unknown outcome: a node that exists may be ours
	madeParents bool
	expired     int // creates that found the session expired
}

func newAttempt() *attempt { return &attempt{stamp: newStamp()} }

// take is step 1: it creates the lock node, stamped, and claims it. It
// returns an error wrapping zklocks.ErrLocked when another session's node is
// there.
//
// One stamp serves every create of a Lock call. After a create whose
// outcome is unknown (unsure), a node that exists may be that very create,
// applied late or missed by the look that followed it: a NodeExists then
// looks at the node first, or the caller would wait for its own node to go.
// The missing parents are made once; a create that finds the session
// expired is tried again on the next session; one whose connection went
// while it was in flight looks for its node once the client is back.
func (m *Mutex) take(ctx context.Context, a *attempt) (*holding, error) {
	stamp := a.stamp
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sid, err := m.create(ctx, stamp)
		if errors.Is(err, zk.ErrNodeExists) && a.unsure {
			if h, ferr := m.findOwn(ctx, stamp); h != nil || ferr != nil {
				return h, ferr
			}
		}
		switch {
		case err == nil:
			return m.claim(ctx, stamp, sid)
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return nil, err
		case errors.Is(err, zk.ErrNodeExists):
			return nil, fmt.Errorf("%w: %w", zklocks.ErrLocked, err)
		case errors.Is(err, zk.ErrNoNode) && !a.madeParents:
			a.madeParents = true
			if err := m.base.Client.EnsureParents(ctx, m.base.Path, zkpath.Ancestors(m.base.Path), false, m.base.ACL); err != nil {
				return nil, m.wrap("create the parents", ctx, err)
			}
		case errors.Is(err, zk.ErrSessionExpired) && a.expired < expiredTries:
			// The node, if the create made it, went with that session:
			// create again on the next one.
			a.expired++
			if err := zkop.Sleep(ctx, 20*time.Millisecond); err != nil {
				return nil, err
			}
		case zkop.Transient(err):
			// The create may have been applied and only its answer lost
			// (ErrConnectionClosed, or the raw network error when the
			// connection broke as it was written; ErrNoServer: it was
			// never sent, and the look says so).
			a.unsure = true
			h, ferr := m.findOwn(ctx, stamp)
			if h != nil || ferr != nil {
				return h, ferr
			}
			// Not applied, or gone with an old session: try again.
		default:
			return nil, m.wrap("create", ctx, err)
		}
	}
}
