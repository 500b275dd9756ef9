package reentrant

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zkop"
)

// This file is the count in the node (WithCountMode(InNode)): the holder
// record our node carries, and the versioned write of the re-entry count
// that the InNode mode adds to every re-entry and every Unlock but the
// last, with the read-back that settles a write whose answer was lost.
// The InMemory mode uses only the record, written once at the create.

// record is our node's data for owner at depth count: the holder record.
func (m *Mutex) record(owner string, count int) []byte {
	data := Holder{Host: m.host, PID: m.pid, Owner: owner, Mode: m.mode.String()}
	if m.mode == InNode {
		data.Count = count
	}
	return data.encode()
}

// errCountWrite is in the chain of the loss an InNode count write that
// failed causes.
var errCountWrite = errors.New("count write")

// countWrite is one InNode change of the depth: owner's hold (the
// Mutex's ends when it began) moves by delta to depth, written to node,
// whose data we last left at version.
type countWrite struct {
	owner        string
	delta, depth int
	hold         int
	node         string
	version      int32
}

// writeDepth makes the write w. The caller's cancellation does not cut it
// short: an abandoned write would leave us not knowing the node's
// version, so it runs to its end (at most a session timeout). When it
// fails, the hold cannot be trusted: with BadVersion someone else wrote to
// our node, with NoNode it was deleted, with a timeout the ensemble could
// not be reached for a session timeout (a shorter blip writeCount rides
// out), with anything else we no longer know what the node says. The hold
// then ends as lost and our node goes if it is still there. It returns
// errHoldChanged when w was a re-entry that did not happen.
func (m *Mutex) writeDepth(ctx context.Context, w countWrite) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.base.Session.Timeout())
	stat, err := m.writeCount(wctx, w.node, m.record(w.owner, w.depth), w.version)
	cancel()

	m.mu.Lock()
	switch {
	case m.ends != w.hold: // lost while we wrote, and reaped
		m.mu.Unlock()
		if w.delta < 0 {
			return m.reportLost(w.owner)
		}
		return errHoldChanged
	case err == nil:
		m.count, m.version = w.depth, stat.Version
		m.mu.Unlock()
		return nil
	}
	why := fmt.Errorf("%w: %w: %w", zklocks.ErrLockLost, errCountWrite, err)
	owed := m.count
	if w.delta < 0 {
		owed-- // this Unlock is answered now
	}
	m.loseLocked(owed, why)
	m.mu.Unlock()
	_ = m.release(ctx, why)
	if w.delta < 0 {
		return why
	}
	return errHoldChanged
}

// writeCount sets our node's data at version. When the connection goes
// while the write is in flight, its outcome is unknown; once the client is
// back (same session) it reads the node: as its only writer we know that
// the version we wrote at means the write was not applied (write again),
// and that one more, with our data, means it was. Anything else is
// someone else's write (ErrBadVersion), a deleted node (ErrNoNode) or
// another session's node (zklocks.ErrLockLost): the hold is lost. It
// gives up when ctx ends (the caller bounds it by a session timeout: past
// that, an unreachable ensemble has expired the session).
func (m *Mutex) writeCount(ctx context.Context, node string, data []byte, version int32) (*zk.Stat, error) {
	sid := m.base.Session.Conn().SessionID()
	for {
		st, err := m.base.Client.Set(ctx, node, data, version)
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
// once the connection is back, and says whether the write was applied.
func (m *Mutex) readBack(ctx context.Context, node string, data []byte, version int32, sid int64) (*zk.Stat, bool, error) {
	var b zkop.Backoff
	for {
		if err := b.Sleep(ctx); err != nil {
			return nil, false, err
		}
		if m.base.Session.Conn().State() != zk.StateHasSession {
			continue // do not queue a read in go-zookeeper while it is cut off
		}
		got, st, err := m.base.Client.GetSynced(ctx, node) // the write's answer was never seen
		switch {
		case err != nil && zkop.Transient(err) && ctx.Err() == nil:
			// Still cut off: look again.
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
