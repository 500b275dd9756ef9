package naive

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/lockbase"
	"github.com/zklocks/zklocks/internal/oplog"
	"github.com/zklocks/zklocks/internal/zkop"
)

// Mutex is one contender for the lock at one path: the lock is held while
// the path exists as an ephemeral node of this Mutex's session.
//
// Its methods are safe for concurrent use. A Mutex is not re-entrant: Lock
// while it holds (or is acquiring) the lock fails with zklocks.ErrAlreadyLocked.
// A hold that was lost stays this Mutex's until Unlock, which reports the
// loss; only then can it Lock again. Two Mutexes on the same path exclude
// each other even when they share a connection.
type Mutex struct {
	base *lockbase.Base

	mu    sync.Mutex // guards state and cur; never held across a request
	state state
	cur   *holding // set while state == held
}

type state int

const (
	idle state = iota
	acquiring
	held
	releasing
)

// holding is one hold: the node this Mutex created and the monitor that
// watches it.
type holding struct {
	mon     *hold.Monitor
	stamp   []byte // the node's data: the random id of the create that made it
	session int64  // the session that created the node
	czxid   int64  // the node's creation zxid: the fencing token
	log     *oplog.Hold
}

var _ zklocks.Locker = (*Mutex)(nil)

// New returns a Mutex for the lock at path on session s. It checks its
// input and sends nothing to ZooKeeper.
func New(s *zklocks.Session, path string, opts ...zklocks.Option) (*Mutex, error) {
	b, err := lockbase.Open("naive", s, path, opts, nil)
	if err != nil {
		return nil, err
	}
	return &Mutex{base: b}, nil
}

// Lock blocks until the lock is held, ctx is done, or an error makes
// waiting pointless.
//
// It creates the lock path as an ephemeral node (and its missing parents
// as persistent nodes). While another session holds the lock, Lock sets an
// exists watch on the node and sleeps until the watch fires, then tries
// again; every waiter does the same on every release. A lost connection
// is retried for a while; any other error but "node exists" is returned.
//
// The node's data is a random id, one per call: its retried creates carry
// the same id. The path can not tell our node from another client's, the
// id can. When ctx ends first, Lock returns ctx.Err() and leaves nothing
// behind: a create whose answer arrives later is undone in the background,
// and only a node that carries our id is deleted. Once the create has
// succeeded, Lock finishes the acquisition even if ctx ends meanwhile.
func (m *Mutex) Lock(ctx context.Context) error { return m.base.Fail("lock", m.acquire(ctx, true)) }

// TryLock is Lock without the wait: when another session holds the lock it
// returns an error wrapping zklocks.ErrLocked at once.
func (m *Mutex) TryLock(ctx context.Context) error {
	return m.base.Fail("trylock", m.acquire(ctx, false))
}

func (m *Mutex) acquire(ctx context.Context, wait bool) error {
	m.mu.Lock()
	if m.state != idle {
		m.mu.Unlock()
		return zklocks.ErrAlreadyLocked
	}
	m.state = acquiring
	m.mu.Unlock()

	start := m.base.Log.Now()
	h, err := m.lock(ctx, wait)
	if err != nil && m.base.Log != nil && !errors.Is(err, zklocks.ErrLocked) {
		m.base.Log.Abandon(ctx, "", start, err)
	}
	if err == nil {
		h.log = m.logAcquire(ctx, h, start)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.state = idle
		return err
	}
	m.state, m.cur = held, h
	return nil
}

// logAcquire writes the acquire event and has the monitor log a loss as
// soon as it sees one.
func (m *Mutex) logAcquire(ctx context.Context, h *holding, start time.Time) *oplog.Hold {
	if m.base.Log == nil {
		return nil
	}
	hl := m.base.Log.Acquire(ctx, m.base.Path, h.czxid, h.session, start)
	h.mon.OnLoss(func(reason error) { hl.Lost(context.Background(), reason) })
	return hl
}

// findOwn looks, once the client is back, for the node of a create whose
// answer the connection took with it. The lock node is ours if it carries
// our stamp and belongs to the session the client has now; a node with
// our stamp from an expired session is about to vanish, and any other
// node is another holder's. It returns nil, nil when the node is not
// ours. It waits for the client to be back while ctx allows (an outage
// is no reason to give up), gives up at once when the connection has been
// closed or a read is refused, and then leaves our node, if there is one,
// to a background delete.
func (m *Mutex) findOwn(ctx context.Context, stamp []byte) (*holding, error) {
	pause := 20 * time.Millisecond
	for {
		// A pause first: right after a Close go-zookeeper still reports
		// its session for a moment. Then nothing is sent without a
		// session: on a closed connection a request can stop
		// go-zookeeper's event loop (zkop.AwaitSession).
		if err := zkop.Sleep(ctx, pause); err != nil {
			return nil, m.lookFailed(ctx, stamp, err)
		}
		pause = min(2*pause, 500*time.Millisecond)
		var data []byte
		var stat *zk.Stat
		err := m.base.Client.AwaitSession(ctx, zkop.DialRound)
		if err == nil {
			data, stat, err = m.base.Client.GetSynced(ctx, m.base.Path) // the create's answer was never seen
		}
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil, nil
		case err == nil && bytes.Equal(data, stamp) && stat.EphemeralOwner == m.base.Client.Conn.SessionID():
			return m.claim(ctx, stamp, stat.EphemeralOwner)
		case err == nil:
			return nil, nil
		case !retryLater(err) || ctx.Err() != nil:
			return nil, m.lookFailed(ctx, stamp, err)
		}
	}
}

// expiredTries bounds creates in a row that find the session expired.
const expiredTries = 6

// lookFailed ends a findOwn that could not look: our node, if the create
// made one, is left to a background delete, and the error says why.
func (m *Mutex) lookFailed(ctx context.Context, stamp []byte, err error) error {
	m.deleteLater(stamp, 0)
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return err
	}
	return fmt.Errorf("create: the connection went before the answer, and the node can not be looked for: %w", err)
}

// create sends the create of the lock node, stamped with a random id,
// and waits for its answer or for ctx. On success it returns the session
// that answered, which is the session that owns the node.
//
// Two outcomes can leave a node the caller does not know about: an answer
// that arrives after ctx ended, and a connection that broke after the
// request was sent (the servers may have applied it). The lock path can
// not tell whose node it is, the stamp can. In the first case the node is
// deleted in the background if it carries our stamp; in the second,
// ErrConnectionClosed, take looks for it (findOwn) and takes it.
func (m *Mutex) create(ctx context.Context, stamp []byte) (int64, error) {
	answer := make(chan error, 1)
	go func() {
		// Not ctx: this request must report its real outcome.
		_, err := m.base.Client.Create(context.WithoutCancel(ctx), m.base.Path, stamp, zk.FlagEphemeral, m.base.ACL)
		answer <- err
	}()
	select {
	case err := <-answer:
		return m.base.Client.Conn.SessionID(), err
	case <-ctx.Done():
		go func() {
			if err := <-answer; err == nil || zkop.Transient(err) {
				m.deleteLater(stamp, 0)
			}
		}()
		return 0, ctx.Err()
	}
}

// claim starts watching the node just created and reads it back: the
// czxid is the fencing token; the ephemeralOwner and the stamp together
// prove the node is ours. The owner alone does not: another Mutex on the
// same connection may have made the node again after ours was deleted.
func (m *Mutex) claim(ctx context.Context, stamp []byte, sid int64) (*holding, error) {
	// The node exists; finish even if the caller's ctx ends now, rather
	// than leave a node that must then be cleaned up.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.base.Client.SessionTimeout)
	defer cancel()
	mon, data, stat, err := hold.Watch(cctx, m.base.Client, m.base.Path)
	switch {
	case err == nil && stat.EphemeralOwner == sid && bytes.Equal(data, stamp):
		return &holding{mon: mon, stamp: stamp, session: sid, czxid: stat.Czxid}, nil
	case err == nil && stat.EphemeralOwner == sid:
		// Our session's node with another stamp: ours was deleted right
		// after the create, and another Mutex of this connection made
		// the node again.
		mon.Release()
		return nil, fmt.Errorf("%w: right after the create, the node was replaced by another lock of this session: %w", zklocks.ErrLockLost, hold.ErrNodeDeleted)
	case err == nil:
		// The connection moved to a new session after our create, so our
		// node died with the old one; this node is another Mutex's on the
		// same connection.
		mon.Release()
		return nil, fmt.Errorf("%w: session %#x ended right after the create: %w", zklocks.ErrLockLost, sid, hold.ErrSessionExpired)
	case errors.Is(err, hold.ErrSessionExpired) && m.base.Client.Conn.SessionID() == sid:
		// Our session lives on, so the node of another session at our
		// path is not ours: ours was deleted right after the create.
		return nil, fmt.Errorf("%w: right after the create, the node was replaced: %w", zklocks.ErrLockLost, hold.ErrNodeDeleted)
	case errors.Is(err, hold.ErrNodeDeleted), errors.Is(err, hold.ErrSessionExpired):
		return nil, fmt.Errorf("%w: right after the create: %w", zklocks.ErrLockLost, err)
	default:
		m.deleteLater(stamp, 0)
		return nil, m.wrap("read back", ctx, err)
	}
}

// awaitRelease sets an exists watch on the lock node and waits until it
// fires. It returns nil when it is time to try the create again.
func (m *Mutex) awaitRelease(ctx context.Context) error {
	exists, _, ev, err := m.base.Client.ExistsW(ctx, m.base.Path)
	switch {
	case err != nil && retryLater(err) && ctx.Err() == nil:
		// The connection went: the create, tried again, waits for it
		// (and a create that still finds no server ends the Lock).
		return nil
	case err != nil:
		return m.wrap("watch", ctx, err)
	case !exists:
		// Released between our create and our exists: try again now. The
		// exists call left a watch for the node's creation behind; it fires
		// once, into a buffered channel nobody reads.
		return nil
	}
	if m.base.Log != nil {
		m.base.Log.Wait(ctx, "", m.base.Path, -1, m.base.Client.Conn.SessionID())
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case e := <-ev:
		m.base.Client.Notified()
		if e.Type == zk.EventNotWatching {
			// The session expired or the connection was closed.
			if errors.Is(e.Err, zk.ErrSessionExpired) {
				return fmt.Errorf("%w: session expired while waiting: %w", zklocks.ErrLockLost, e.Err)
			}
			return fmt.Errorf("wait: %w", e.Err)
		}
		return nil // deleted (or changed): try again
	}
}

// Unlock releases the lock. It deletes the lock node only after a read
// shows it is still the node this Mutex created: same session
// (ephemeralOwner) and same czxid; it deletes at the version read, never
// with -1. That read is the guard against removing a lock another client
// took after ours was lost. The version is not (a new node starts at
// version 0 too), and the round trip between the read and the delete
// stays open: see the package doc.
//
// Unlock fails with zklocks.ErrNotLocked when the Mutex does not hold the lock, and
// with zklocks.ErrLockLost when the hold was lost before Unlock (Done was closed,
// or the node is gone or no longer ours); the Mutex is then free for the
// next Lock. When the delete can not be sent now (ctx ends, connection
// down) it is retried in the background until it succeeds or the session
// ends, and Unlock returns nil: the node can not outlive the session.
func (m *Mutex) Unlock(ctx context.Context) error { return m.base.Fail("unlock", m.unlock(ctx)) }

func (m *Mutex) unlock(ctx context.Context) error {
	m.mu.Lock()
	if m.state != held {
		m.mu.Unlock()
		return zklocks.ErrNotLocked
	}
	h := m.cur
	m.state, m.cur = releasing, nil
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.state = idle
		m.mu.Unlock()
	}()

	lost := h.mon.Err() // nil unless the monitor saw the hold end
	h.mon.Release()
	// Delete even after a loss: a hold "lost" to a long disconnection may
	// come back with the session, and its node must not stay behind.
	err := m.release(ctx, h)
	if lost != nil {
		h.log.Lost(ctx, lost) // written already by the monitor
		return fmt.Errorf("%w: %w", zklocks.ErrLockLost, lost)
	}
	if errors.Is(err, zklocks.ErrLockLost) {
		h.log.Lost(ctx, err)
	} else {
		h.log.Release(ctx, err)
	}
	return err
}

// release deletes the lock node if it is still h's.
func (m *Mutex) release(ctx context.Context, h *holding) error {
	for range 3 { // a BadVersion (our node's data changed under us) reads again
		if m.base.Client.Conn.SessionID() != h.session {
			return fmt.Errorf("%w: session %#x ended: %w", zklocks.ErrLockLost, h.session, hold.ErrSessionExpired)
		}
		_, stat, err := m.base.Client.Get(ctx, m.base.Path)
		if err == nil {
			if stat.EphemeralOwner != h.session || stat.Czxid != h.czxid {
				return fmt.Errorf("%w: the node now belongs to session %#x: %w", zklocks.ErrLockLost, stat.EphemeralOwner, hold.ErrNodeDeleted)
			}
			// Never queued without our session: it would go out on the
			// next one, and version 0 matches the next holder's node too.
			err = m.base.Client.DeleteOnSession(ctx, m.base.Path, stat.Version, h.session)
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrSessionExpired):
			return fmt.Errorf("%w: session %#x ended: %w", zklocks.ErrLockLost, h.session, hold.ErrSessionExpired)
		case errors.Is(err, zk.ErrBadVersion):
			continue
		case errors.Is(err, zk.ErrNoNode):
			return fmt.Errorf("%w: the node was deleted: %w", zklocks.ErrLockLost, err)
		case retryLater(err):
			m.deleteLater(h.stamp, h.czxid)
			return nil
		default:
			return m.wrap("delete", ctx, err)
		}
	}
	return errors.New("delete: the node's version keeps changing")
}

// deleteLater deletes the lock node in the background (zkop.Client.Later: while
// the connection keeps this session, until it is closed) if it carries
// stamp, is that very node when czxid is not 0, and belongs to the
// session the connection has now. A node that is gone or not ours ends
// it. Each delete is checked against that session right before it is
// sent (zkop.Client.DeleteOnSession).
func (m *Mutex) deleteLater(stamp []byte, czxid int64) {
	sid := m.base.Client.Conn.SessionID()
	m.base.Client.Later(func(ctx context.Context) (bool, error) {
		data, stat, err := m.base.Client.GetSynced(ctx, m.base.Path) // the node may be from a create whose answer was lost
		if err == nil {
			if !bytes.Equal(data, stamp) || (czxid != 0 && stat.Czxid != czxid) || stat.EphemeralOwner != sid {
				return true, nil
			}
			err = m.base.Client.DeleteOnSession(ctx, m.base.Path, stat.Version, sid)
		}
		switch {
		case err == nil, errors.Is(err, zk.ErrNoNode):
			return true, nil
		case errors.Is(err, zk.ErrBadVersion):
			return false, nil // its data changed: read it again
		}
		return false, err
	})
}

// newStamp returns a random id for the creates of one Lock or TryLock.
func newStamp() []byte {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand since Go 1.24)
	return []byte(hex.EncodeToString(b))
}

// retryLater reports whether err means "not now" rather than "no": a
// request that failed for want of a connection, or a ctx that ended.
func retryLater(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || zkop.Transient(err)
}

// wrap names the failed step; a ctx error is returned as it is.
func (m *Mutex) wrap(step string, ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return err
	}
	return fmt.Errorf("%s: %w", step, err)
}

// Token returns the fencing token of the current hold, the czxid of the
// lock node, or 0 when the lock is not held. Tokens of successive holds
// of one path grow strictly.
func (m *Mutex) Token() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != held {
		return 0
	}
	return m.cur.czxid
}

// closed is what Done returns when there is no hold.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns a channel that is closed when the current hold ends: by
// Unlock, or because it was lost (node deleted, session expired, or cut
// off from the ensemble so long that the servers may soon expire the
// session). When the lock is not held it returns a closed channel. Done
// closes late, never early: until it closes, a paused or partitioned
// process can still believe it holds a lock that the ensemble has already
// given away; use Token to fence the resource.
func (m *Mutex) Done() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != held {
		return closed
	}
	return m.cur.mon.Done()
}

// Stats returns the requests this Mutex sent and the watch events it
// received. On a contended lock, Notifications grows by one for every
// release while this Mutex waits: the herd effect, seen from one client.
func (m *Mutex) Stats() zklocks.Stats { return m.base.Stats() }
