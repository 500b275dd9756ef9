package sequential

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockerr"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/oplog"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

// Errors returned by this package. Errors from ZooKeeper and from the
// context are wrapped, so errors.Is works for them as well.
var (
	ErrBadPath       = errors.New("invalid lock path")
	ErrNilConn       = errors.New("nil connection")
	ErrLocked        = errors.New("locked by another session")
	ErrNotLocked     = errors.New("lock not held")
	ErrLockLost      = errors.New("lock lost")
	ErrAlreadyLocked = errors.New("already locked by this mutex")
	ErrBadOption     = errors.New("invalid option")
)

// DefaultSessionTimeout is the session timeout assumed when
// WithSessionTimeout is not given.
const DefaultSessionTimeout = 10 * time.Second

// Option configures a Mutex.
type Option func(*options)

type options struct {
	acl            []zk.ACL
	sessionTimeout time.Duration
	data           []byte
	logger         *slog.Logger
	log            *oplog.Log // made from logger
}

// WithACL sets the ACL of the nodes the Mutex creates: its own node and
// any missing parents. The default is zk.WorldACL(zk.PermAll).
func WithACL(acl []zk.ACL) Option {
	return func(o *options) { o.acl = acl }
}

// WithSessionTimeout tells the Mutex the session timeout its connection
// was opened with (go-zookeeper does not expose it). It bounds clean-up
// after a failed Lock and says when a client cut off from the ensemble
// must consider its hold lost. The default is DefaultSessionTimeout.
// A duration that is not positive makes New fail with ErrBadOption.
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) {
		o.sessionTimeout = d
	}
}

// WithData sets the data stored in the Mutex's node when it is created,
// for example who the contender is. Contenders returns it.
func WithData(data []byte) Option {
	return func(o *options) { o.data = append([]byte(nil), data...) }
}

// WithLogger makes the Mutex write its operation log to l: acquire,
// wait, release, lost and abandon events, with stable messages and keys
// (see "Operation log" in the package doc). nil, the default, turns the
// log off; it then costs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// Mutex is one contender for the lock at one path, with its own node in
// the lock's queue. Use one Mutex per contender; its methods are safe for
// concurrent use, but it holds the lock at most once at a time.
type Mutex struct {
	path string
	opts options
	q    *lockq.Queue

	mu   sync.Mutex
	slot *lockq.Slot // idle, acquiring or held; guarded by mu
}

var _ zklocks.Locker = (*Mutex)(nil)

// New returns a Mutex for the lock at path on conn. It checks its
// arguments and sends nothing to ZooKeeper; the lock path and its parents
// are created by the first Lock that finds them missing.
func New(conn *zk.Conn, path string, opts ...Option) (*Mutex, error) {
	if conn == nil {
		return nil, lockerr.Wrap("sequential", "new", path, ErrNilConn)
	}
	if err := zkpath.Validate(path); err != nil {
		return nil, lockerr.Wrap("sequential", "new", path, fmt.Errorf("%w: %v", ErrBadPath, err))
	}
	o := options{acl: zk.WorldACL(zk.PermAll), sessionTimeout: DefaultSessionTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.sessionTimeout <= 0 {
		return nil, lockerr.Wrap("sequential", "new", path, fmt.Errorf("%w: session timeout %v (want the positive one the servers granted)", ErrBadOption, o.sessionTimeout))
	}
	o.log = oplog.New(o.logger, "sequential", path)
	cfg := lockq.Config{Data: o.data, ACL: o.acl, Lost: ErrLockLost}
	m := &Mutex{path: path, opts: o, q: lockq.New(zkop.New(conn, o.sessionTimeout), path, cfg)}
	m.slot = lockq.NewSlot(&m.mu, m.q)
	return m, nil
}

// Lock joins the queue and waits until this Mutex is first in it. It
// returns ctx's error when ctx ends first, ErrLockLost when its node
// vanishes while it waits (deleted, or its session expired), and
// ErrAlreadyLocked when this Mutex holds the lock or is acquiring it.
// Whenever it fails, its node is gone from the ensemble before it returns
// or, when the ensemble can not be reached, is deleted in the background
// as soon as it can be (or goes with the session). It does not wait for
// the ensemble: Lock returns at most about a second after ctx ends.
func (m *Mutex) Lock(ctx context.Context) error { return m.fail("lock", m.acquire(ctx, true)) }

// TryLock takes the lock only if nobody is in the queue, without waiting.
// It fails with ErrLocked otherwise. It first syncs its server with the
// leader, so it sees every release that completed before it was called;
// when the queue is occupied it costs a sync and one read, and writes
// nothing.
func (m *Mutex) TryLock(ctx context.Context) error { return m.fail("trylock", m.acquire(ctx, false)) }

func (m *Mutex) acquire(ctx context.Context, wait bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n := lockq.NewNode(m.opts.log)
	m.mu.Lock()
	if !m.slot.IdleLocked() {
		m.mu.Unlock()
		return ErrAlreadyLocked
	}
	m.slot.BeginLocked(n)
	m.mu.Unlock()
	return m.slot.Acquire(ctx, n, m.opts.log, ErrLocked, func() error { return m.lock(ctx, n, wait) })
}

// Unlock releases the lock by deleting this Mutex's node, which wakes the
// next contender. It returns ErrNotLocked when the lock is not held, and
// ErrLockLost (wrapping the reason) when the hold had already been lost;
// the node, if it still exists, is deleted in either case. When the
// ensemble can not be reached (or ctx ends) the delete goes on in the
// background until it succeeds or the session ends, and Unlock returns nil.
func (m *Mutex) Unlock(ctx context.Context) error { return m.fail("unlock", m.unlock(ctx)) }

func (m *Mutex) unlock(ctx context.Context) error {
	held, err := m.slot.Release(ctx)
	if !held {
		return ErrNotLocked
	}
	return err
}

// Token returns the fencing token of the current hold, the czxid of this
// Mutex's node, or 0 when the lock is not held. It keeps returning the
// token of a hold that has been lost until Unlock; a resource that
// compares tokens rejects it once a newer holder has used its own.
func (m *Mutex) Token() int64 { return m.slot.Token() }

// Done returns a channel that is closed when the current hold ends:
// released by Unlock, or lost because the node was deleted, the session
// expired, or the client has been cut off from the leader so long that
// the leader may soon expire its session (nine tenths of a session
// timeout after it last surely heard from it). When the lock is not
// held it returns a closed channel. A closed Done comes late; it never
// protects a holder that is paused: use Token to fence the resource.
func (m *Mutex) Done() <-chan struct{} { return m.slot.Done() }

// Err returns why the last hold was lost, wrapped in ErrLockLost; nil
// while the lock is held (and not lost), after a plain Unlock, and before
// the first hold.
func (m *Mutex) Err() error { return m.slot.Err() }

// Node returns the full path of this Mutex's node while it holds the lock,
// or while it acquires it once the node is created; "" otherwise.
func (m *Mutex) Node() string { return m.slot.Node() }

// Stats returns the requests this Mutex has sent and the watch events it
// has received.
func (m *Mutex) Stats() zklocks.Stats { return m.q.Client().Stats() }

// fail gives an error of the API the package's prefix (internal/lockerr).
func (m *Mutex) fail(op string, err error) error {
	return lockerr.Wrap("sequential", op, m.path, lockerr.Lost(err, ErrLockLost))
}
