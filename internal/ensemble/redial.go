package ensemble

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// A redialer stands between the proxies of every way to one member and
// that member's quorum port, and gives back what a proxy takes from the
// network: a refused connection is retried.
//
// A follower that finds its new leader's port closed (the leader is
// still setting up, a millisecond behind) retries the connect a few
// times, 100ms apart (Learner.connectToLeader). Through a proxy its
// connect always succeeds, because the proxy accepts first and dials the
// leader after; when that dial is refused the proxy closes the accepted
// connection, the follower reads an end of file, gives the election up
// and starts another round, while the leader waits initLimit ticks for
// followers that are no longer coming. Seen here: a member killed, the
// two others failing to agree for more than a minute, one initLimit at a
// time. The redialer keeps the follower's connection open and dials the
// leader again, as often as the follower would have.
type redialer struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup
	ctx      context.Context // cancelled by close: ends dials and pauses
	cancel   context.CancelFunc

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// The follower's own retries (ZooKeeper 3.8's Learner.LeaderConnector):
// five connects, 100ms apart (zookeeper.leaderConnectDelayDuringRetryMs),
// all within initLimit ticks.
const (
	redialEvery = 100 * time.Millisecond
	redialTries = 5
)

// newRedialer listens on a free loopback port and forwards each
// connection to upstream.
func newRedialer(upstream string) (*redialer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("ensemble: redialer for %s: %w", upstream, err)
	}
	r := &redialer{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

func (r *redialer) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *redialer) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return // closed
		}
		if !r.track(c) {
			c.Close()
			return
		}
		r.wg.Add(1)
		go r.serve(c)
	}
}

func (r *redialer) serve(down net.Conn) {
	defer r.wg.Done()
	defer r.untrack(down)
	up, err := r.dial()
	if err != nil {
		return
	}
	defer r.untrack(up)
	var copies sync.WaitGroup
	copies.Add(2)
	pipe := func(dst, src net.Conn) {
		defer copies.Done()
		_, _ = io.Copy(dst, src)
		// Either side's end ends both, as a proxy does.
		dst.Close()
		src.Close()
	}
	go pipe(up, down)
	go pipe(down, up)
	copies.Wait()
}

// dial connects to upstream, trying as often as the follower would; the
// connection it returns is tracked.
func (r *redialer) dial() (net.Conn, error) {
	d := net.Dialer{Timeout: time.Second}
	for try := 1; ; try++ {
		up, err := d.DialContext(r.ctx, "tcp", r.upstream)
		if err == nil {
			if !r.track(up) {
				up.Close()
				return nil, net.ErrClosed
			}
			return up, nil
		}
		if try == redialTries {
			return nil, err
		}
		select {
		case <-time.After(redialEvery):
		case <-r.ctx.Done():
			return nil, net.ErrClosed
		}
	}
}

func (r *redialer) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *redialer) untrack(c net.Conn) {
	c.Close()
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

// close stops listening, ends every forwarded connection and waits for
// the goroutines.
func (r *redialer) close() {
	r.cancel()
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.ln.Close()
	r.wg.Wait()
}
