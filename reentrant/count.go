package reentrant

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/lockopt"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/zkop"
)

// This file is the count mode: where a hold's depth is kept. InMemory
// needs nothing here but the holder record, written once at the create;
// InNode adds a versioned write of the record to every re-entry and every
// Unlock but the last, and the read-back that settles a write whose
// answer the connection took with it.

// CountMode says where a hold's re-entry count is kept.
type CountMode int

const (
	// InMemory keeps the count in the Mutex only, as Curator's
	// InterProcessMutex does: a re-entry or an inner Unlock costs no
	// ZooKeeper request. The node's data names the holder but carries no
	// count. This is the default.
	InMemory CountMode = iota
	// InNode also keeps the count in the node's data (docs/03-reentrant.md,
	// "Two count modes"): every re-entry and every inner Unlock is one versioned
	// setData, so inspection shows the current depth. A write that is
	// refused (BadVersion: someone else wrote to our node; NoNode: it was
	// deleted) or can not be made within a session timeout ends the hold
	// as lost; one whose answer a connection blip took is read back.
	InNode
)

// String returns "memory" or "node", the words used in the node data and
// in the benchmark names.
func (c CountMode) String() string {
	switch c {
	case InMemory:
		return "memory"
	case InNode:
		return "node"
	}
	return fmt.Sprintf("CountMode(%d)", int(c))
}

// WithCountMode chooses where the re-entry count is kept (default
// InMemory). A mode that is neither makes New fail with
// zklocks.ErrBadOption.
func WithCountMode(c CountMode) zklocks.Option {
	return zklocks.VariantOption(optMode, c)
}

const optMode = "reentrant.WithCountMode"

// takeMode is New's reading of WithCountMode.
func takeMode(o *lockopt.Options) (CountMode, error) {
	mode, _ := lockopt.Take[CountMode](o, optMode) // InMemory when not given
	if mode != InMemory && mode != InNode {
		return mode, fmt.Errorf("%w: unknown count mode %d", zklocks.ErrBadOption, int(mode))
	}
	return mode, nil
}

// record is our node's data for owner at depth count: the holder record,
// with the count in InNode mode only, so that nobody reads a stale one.
func (m *Mutex) record(owner string, count int) []byte {
	h := m.self
	h.Owner = owner
	if m.mode == InNode {
		h.Count = count
	}
	return h.encode()
}

// errCountWrite is in the chain of the loss an InNode count write that
// failed causes.
var errCountWrite = errors.New("count write")

// countWrite is one InNode change of owner's depth: to depth, written to
// the hold's node, whose data we last left at version.
type countWrite struct {
	owner   string
	depth   int
	node    *lockq.Node
	version int32
}

// writeDepth makes the write w. The caller's cancellation does not cut it
// short: an abandoned write would leave us not knowing the node's
// version, so it runs to its end (at most a session timeout). When it
// fails, the hold cannot be trusted: with BadVersion someone else wrote to
// our node, with NoNode it was deleted, with a timeout the ensemble could
// not be reached for a session timeout (a shorter blip writeCount rides
// out), with anything else we no longer know what the node says. The hold
// then ends as lost, as if its watch had seen it go, and the caller, told
// errHoldChanged, looks again and reaps it (reapIfLost).
func (m *Mutex) writeDepth(ctx context.Context, w countWrite) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.base.Session.Timeout())
	stat, err := m.writeCount(wctx, w.node.Monitor(), m.record(w.owner, w.depth), w.version)
	cancel()

	m.mu.Lock()
	same := m.slot.HeldLocked() == w.node && m.count > 0 // not reaped while we wrote
	if same && err == nil {
		m.count, m.version = w.depth, stat.Version
	}
	m.mu.Unlock()
	if same && err != nil {
		w.node.Monitor().Lose(fmt.Errorf("%w: %w: %w", zklocks.ErrLockLost, errCountWrite, err))
	}
	if !same || err != nil {
		return errHoldChanged
	}
	return nil
}

// writeCount sets our node's data at version. When the connection goes
// while the write is in flight, its outcome is unknown: readBack settles
// it, and a write that was not applied is sent again. It gives up when
// ctx ends (the caller bounds it by a session timeout: past that, an
// unreachable ensemble has expired the session).
func (m *Mutex) writeCount(ctx context.Context, mon *hold.Monitor, data []byte, version int32) (*zk.Stat, error) {
	sid := m.base.Client.Conn.SessionID()
	node := mon.Path()
	for {
		st, err := mon.SetData(ctx, data, version, nil) // a revocation request is no loss

		if err == nil || !zkop.Transient(err) || ctx.Err() != nil {
			return st, err
		}
		st, applied, err := m.readBack(ctx, node, data, version, sid)
		if err != nil || applied {
			return st, err
		}
	}
}

// readBack reads our node after a count write with an unknown outcome,
// once the session is back, and says whether the write was applied. As
// the node's only writer we know that the version we wrote at means it
// was not, and one more, with our data, that it was. Anything else is
// someone else's write (ErrBadVersion), a deleted node (ErrNoNode) or
// another session's node (zklocks.ErrLockLost): the hold is lost.
func (m *Mutex) readBack(ctx context.Context, node string, data []byte, version int32, sid int64) (*zk.Stat, bool, error) {
	c := m.base.Client
	var b zkop.Backoff
	for {
		if err := b.Sleep(ctx); err != nil {
			return nil, false, err
		}
		if err := c.AwaitSession(ctx, 0); err != nil { // do not queue a read while cut off
			return nil, false, err // ctx's end, or the connection closed
		}
		got, st, err := c.GetSynced(ctx, node) // synced: the write's answer was never seen
		switch {
		case err != nil && zkop.Transient(err) && ctx.Err() == nil:
			// Cut off again: look again.
		case err != nil:
			return nil, false, err
		case st.EphemeralOwner != sid:
			return nil, false, fmt.Errorf("%w: %s belongs to session %#x, ours was %#x",
				zklocks.ErrLockLost, node, st.EphemeralOwner, sid)
		case st.Version == version:
			return nil, false, nil // not applied
		case st.Version == version+1 && bytes.Equal(got, data):
			return st, true, nil
		default:
			return nil, false, fmt.Errorf("%w: the node is at version %d, we wrote at %d", zk.ErrBadVersion, st.Version, version)
		}
	}
}
