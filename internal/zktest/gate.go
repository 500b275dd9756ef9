package zktest

import (
	"sync"

	"github.com/go-zookeeper/zk"
)

// Gate holds a connection in StateDisconnected when it loses its server:
// its Callback, passed with WithEventCallback, blocks go-zookeeper's event
// loop on the Disconnected event while the Gate is armed, as a loaded
// machine that keeps that goroutine off the CPU would. The zero value is
// not usable; use NewGate.
type Gate struct {
	mu    sync.Mutex
	armed chan struct{} // non-nil while armed: closed by Open
	held  chan struct{} // closed when the loop is held
}

// NewGate returns an open Gate.
func NewGate() *Gate { return &Gate{} }

// Callback is the event callback to pass to WithEventCallback.
func (g *Gate) Callback(e zk.Event) {
	if e.Type != zk.EventSession || e.State != zk.StateDisconnected {
		return
	}
	g.mu.Lock()
	armed, held := g.armed, g.held
	g.mu.Unlock()
	if armed != nil {
		close(held)
		<-armed
	}
}

// Arm makes the next Disconnected event hold the loop until Open; the
// channel returned is closed once it does.
func (g *Gate) Arm() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.held = make(chan struct{}), make(chan struct{})
	return g.held
}

// Open lets a held loop go on, and later ones pass.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed != nil {
		close(g.armed)
		g.armed = nil
	}
}
