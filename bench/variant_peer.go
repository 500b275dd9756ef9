package bench

import (
	"context"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
)

// The peer: go-zookeeper's own Lock, the recipe most Go programs use,
// through a thin adapter to zklocks.Locker. It takes no context (Lock
// ignores ctx once called), has no TryLock, no fencing token (Token is 0)
// and no loss signal (Done closes only on Unlock): the adapter adds
// nothing to its requests, so the bench measures the peer as it is.
func init() {
	Register(Variant{
		Name:     "zk-peer",
		Describe: "go-zookeeper zk.Lock: sequential nodes, predecessor watch, re-list children after each wake-up",
		New: func(s *zklocks.Session, path string) (zklocks.Locker, error) {
			return newPeer(s.Conn(), path), nil
		},
	})
}

type peerLock struct {
	l *zk.Lock

	mu   sync.Mutex
	done chan struct{} // nil when not held
}

func newPeer(conn *zk.Conn, path string) *peerLock {
	return &peerLock{l: zk.NewLock(conn, path, zk.WorldACL(zk.PermAll))}
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (p *peerLock) Lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.l.Lock(); err != nil {
		return err
	}
	p.mu.Lock()
	p.done = make(chan struct{})
	p.mu.Unlock()
	return nil
}

// TryLock is not offered by the peer; the adapter waits like Lock.
func (p *peerLock) TryLock(ctx context.Context) error { return p.Lock(ctx) }

func (p *peerLock) Unlock(context.Context) error {
	if err := p.l.Unlock(); err != nil {
		return err
	}
	p.mu.Lock()
	if p.done != nil {
		close(p.done)
		p.done = nil
	}
	p.mu.Unlock()
	return nil
}

func (p *peerLock) Token() int64 { return 0 }

func (p *peerLock) Done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		return closedChan
	}
	return p.done
}
