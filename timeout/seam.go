package timeout

import (
	"context"
	"sync"
)

// renewalGate is the test seam that pauses a Mutex's renewals, and its
// holder's own check of its lease, as a holder whose process stalls while
// its session stays alive would (the tests' PauseRenewal). Production
// code only ever finds it open.
type renewalGate struct {
	mu     sync.Mutex
	paused chan struct{} // non-nil while renewals are paused
}

// wait blocks while renewals are paused. It returns false if stop or lost
// closed first.
func (g *renewalGate) wait(stop context.Context, lost <-chan struct{}) bool {
	g.mu.Lock()
	p := g.paused
	g.mu.Unlock()
	if p == nil {
		return true
	}
	select {
	case <-p:
		return true
	case <-stop.Done():
	case <-lost:
	}
	return false
}

// pause closes the gate until resume is called.
func (g *renewalGate) pause() (resume func()) {
	p := make(chan struct{})
	g.mu.Lock()
	g.paused = p
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			if g.paused == p {
				g.paused = nil
			}
			g.mu.Unlock()
			close(p)
		})
	}
}
