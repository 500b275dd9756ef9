package textbook

import (
	"context"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
)

// Mutex is one contender for the lock at one path.
type Mutex struct {
	conn       *zk.Conn
	path       string
	mu         sync.Mutex    // Token and Done are called from other goroutines than Lock's
	node       string        // our node, from its create until Unlock or a failed Lock
	token      int64         // the node's czxid once held, 0 otherwise
	done, seen chan struct{} // closed when the held node is deleted; when its watch fired at all
}

// New returns a Mutex for the lock at path on s; it checks nothing but s.
func New(s *zklocks.Session, path string, _ ...zklocks.Option) (*Mutex, error) {
	if s == nil {
		return nil, zklocks.ErrNilSession
	}
	m := &Mutex{conn: s.Conn(), path: path, done: make(chan struct{})}
	close(m.done) // a lock that is not held has a closed Done
	return m, nil
}

// Lock waits for the lock until ctx ends; TryLock fails with zklocks.ErrLocked instead.
func (m *Mutex) Lock(ctx context.Context) error    { return m.lock(ctx, true) }
func (m *Mutex) TryLock(ctx context.Context) error { return m.lock(ctx, false) }

func (m *Mutex) lock(ctx context.Context, wait bool) (err error) {
	if err := ctx.Err(); err != nil {
		return err // go-zookeeper takes no ctx: look before sending anything
	}
	m.mu.Lock()
	if m.node != "" {
		m.mu.Unlock()
		return zklocks.ErrAlreadyLocked // a second node would be left behind
	}
	for i := 1; i <= len(m.path); i++ { // the path and its parents: the recipe takes them as given
		if i == len(m.path) || m.path[i] == '/' { // errors ("node exists", mostly) show in the next create
			_, _ = m.conn.Create(m.path[:i], nil, 0, zk.WorldACL(zk.PermAll))
		}
	}
	node, err := m.conn.Create(m.path+"/lock-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
	m.node = node
	m.mu.Unlock()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil { // we give up: delete our node, so that nobody waits behind it
			m.mu.Lock()
			defer m.mu.Unlock()
			_ = m.conn.Delete(node, -1) // if it fails there is nothing more to do
			m.node = ""
		}
	}()
	for {
		kids, _, err := m.conn.Children(m.path)
		if err != nil {
			return err
		}
		slices.Sort(kids) // equal-width sequence numbers sort as strings
		i := slices.Index(kids, node[len(m.path)+1:])
		if i <= 0 { // ours is the lowest (-1: it is gone, and GetW says so): we hold
			_, stat, ch, err := m.conn.GetW(node)
			if err != nil {
				return err
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			m.token, m.done, m.seen = stat.Czxid, make(chan struct{}), make(chan struct{})
			go func(done, seen chan struct{}) { // the hold lasts until the watch sees our node deleted
				if ev := <-ch; ev.Type == zk.EventNodeDeleted {
					close(done)
				}
				close(seen)
			}(m.done, m.seen)
			return nil
		}
		if !wait {
			return zklocks.ErrLocked
		}
		ok, _, ch, err := m.conn.ExistsW(m.path + "/" + kids[i-1]) // the next lower node, not the lowest: no herd
		if err != nil {
			return err
		}
		if ok { // else it went between getChildren and exists: look again at once
			select {
			case <-ch: // it was deleted: look again, someone may still be ahead of us
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

func (m *Mutex) Unlock(ctx context.Context) error { // deletes our node by its name, at any version
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.token == 0 {
		return zklocks.ErrNotLocked
	}
	err := m.conn.Delete(m.node, -1)
	if err == nil {
		<-m.seen // the delete's watch event comes before its answer: Done is closed now
	}
	m.node, m.token = "", 0
	return err
}

func (m *Mutex) Token() int64          { m.mu.Lock(); defer m.mu.Unlock(); return m.token } // our node's czxid
func (m *Mutex) Done() <-chan struct{} { m.mu.Lock(); defer m.mu.Unlock(); return m.done }  // closed once the held node is deleted
