package ensemble

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// An advertiser stands between the election proxies of every way to one
// member and that member's election port, and keeps the dial-back of an
// election connection inside the proxies.
//
// Every election connection opens with the dialler's initial message: a
// protocol version, its server id and the election address it listens
// on (QuorumCnxManager.startConnection). A member that receives a
// connection from a smaller id drops it and dials that id back at the
// address the message named (handleConnection, connectOne), and that
// address is the dialler's own port, which no proxy stands in front of:
// a member cut off by Partition went on voting through it, and could
// win elections that the others could not follow. The advertiser
// rewrites the address to the proxy of the way back (from its member to
// the dialler), so the dial-back crosses the same cut as everything
// else. After the initial message it copies bytes unchanged.
type advertiser struct {
	ln       net.Listener
	upstream string // the member's own election port

	mu    sync.Mutex
	back  map[int64]string // dialler's server id -> the way back's election proxy
	conns map[net.Conn]struct{}
	done  bool
	wg    sync.WaitGroup
}

// initialMessageMax bounds the address a dialler may send, as the
// servers do (InitialMessage.parse takes 1 to 2048 bytes).
const initialMessageMax = 2048

// initialMessageWait bounds the wait for a dialler's first message; a
// member sends it as soon as it connects, but through a silent way it
// never comes.
const initialMessageWait = 10 * time.Second

func newAdvertiser(upstream string) (*advertiser, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("ensemble: election advertiser for %s: %w", upstream, err)
	}
	a := &advertiser{ln: ln, upstream: upstream, back: map[int64]string{}, conns: map[net.Conn]struct{}{}}
	a.wg.Add(1)
	go a.accept()
	return a, nil
}

func (a *advertiser) port() int { return a.ln.Addr().(*net.TCPAddr).Port }

// wayBack tells the advertiser where member sid is reached from its own
// member: the election proxy of that way.
func (a *advertiser) wayBack(sid int, port int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.back[int64(sid)] = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

func (a *advertiser) accept() {
	defer a.wg.Done()
	for {
		c, err := a.ln.Accept()
		if err != nil {
			return // closed
		}
		if !a.track(c) {
			c.Close()
			return
		}
		a.wg.Add(1)
		go a.serve(c)
	}
}

func (a *advertiser) serve(down net.Conn) {
	defer a.wg.Done()
	defer a.untrack(down)
	// The message first, then the member: a dialler that never speaks
	// (a silent way) costs no connection to the member.
	in := bufio.NewReader(down)
	var hello bytes.Buffer
	if down.SetReadDeadline(time.Now().Add(initialMessageWait)) != nil || a.rewrite(in, &hello) != nil ||
		down.SetReadDeadline(time.Time{}) != nil {
		return
	}
	up, err := net.Dial("tcp", a.upstream)
	if err != nil {
		return // the member is down: the dialler sees the close, as it would a refusal
	}
	if !a.track(up) {
		up.Close()
		return
	}
	defer a.untrack(up)
	if _, err := up.Write(hello.Bytes()); err != nil {
		return
	}
	var copies sync.WaitGroup
	copies.Add(2)
	pipe := func(dst io.WriteCloser, src io.Reader, srcc io.Closer) {
		defer copies.Done()
		_, _ = io.Copy(dst, src)
		dst.Close()
		srcc.Close()
	}
	go pipe(up, in, down) // in holds what the reader buffered past the message
	go pipe(down, up, up)
	copies.Wait()
}

// rewrite reads the initial message from in and writes it to out with
// the way back's address in place of the dialler's. A message of the
// protocol before 3.5 (a bare id, no address) passes unchanged.
func (a *advertiser) rewrite(in io.Reader, out io.Writer) error {
	var head [8]byte
	if _, err := io.ReadFull(in, head[:]); err != nil {
		return err
	}
	version := int64(binary.BigEndian.Uint64(head[:]))
	if version >= 0 { // the old protocol: the id itself, nothing to rewrite
		_, err := out.Write(head[:])
		return err
	}
	var sidLen [12]byte
	if _, err := io.ReadFull(in, sidLen[:]); err != nil {
		return err
	}
	sid := int64(binary.BigEndian.Uint64(sidLen[:8]))
	n := int32(binary.BigEndian.Uint32(sidLen[8:]))
	if n <= 0 || n > initialMessageMax {
		return fmt.Errorf("ensemble: election message with an address of %d bytes", n)
	}
	addr := make([]byte, n)
	if _, err := io.ReadFull(in, addr); err != nil {
		return err
	}
	a.mu.Lock()
	back, ok := a.back[sid]
	a.mu.Unlock()
	if ok {
		addr = []byte(back)
	}
	msg := make([]byte, 0, 20+len(addr))
	msg = append(msg, head[:]...)
	msg = binary.BigEndian.AppendUint64(msg, uint64(sid))
	msg = binary.BigEndian.AppendUint32(msg, uint32(len(addr)))
	msg = append(msg, addr...)
	_, err := out.Write(msg)
	return err
}

func (a *advertiser) track(c net.Conn) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return false
	}
	a.conns[c] = struct{}{}
	return true
}

func (a *advertiser) untrack(c net.Conn) {
	c.Close()
	a.mu.Lock()
	delete(a.conns, c)
	a.mu.Unlock()
}

// close stops listening, ends every forwarded connection and waits for
// the goroutines.
func (a *advertiser) close() {
	a.mu.Lock()
	a.done = true
	for c := range a.conns {
		c.Close()
	}
	a.mu.Unlock()
	a.ln.Close()
	a.wg.Wait()
}
