package zktest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// ZooKeeper opcodes a Wire rule may look for.
const (
	OpCreate          int32 = 1
	OpDelete          int32 = 2
	OpExists          int32 = 3
	OpGetData         int32 = 4
	OpSetData         int32 = 5
	OpGetChildren     int32 = 8
	OpSync            int32 = 9
	OpGetChildren2    int32 = 12
	OpCreate2         int32 = 15
	OpCreateContainer int32 = 19
	OpSetWatches      int32 = 101
	// OpNotification marks a watch event in a Reply (ZooKeeper sends them
	// with xid -1 and no request).
	OpNotification int32 = -1
)

// Error codes a Wire rule may answer with.
const (
	CodeUnimplemented int32 = -6
	CodeNoNode        int32 = -101
)

// opsWithPath are the requests whose body starts with a path.
var opsWithPath = map[int32]bool{
	OpCreate: true, OpDelete: true, OpExists: true, OpGetData: true, OpSetData: true,
	OpGetChildren: true, OpSync: true, OpGetChildren2: true, OpCreate2: true, OpCreateContainer: true,
}

// readsWithWatch are the reads whose path is followed by a watch flag.
var readsWithWatch = map[int32]bool{OpExists: true, OpGetData: true, OpGetChildren: true, OpGetChildren2: true}

// Request is one request a Wire's client wrote after its handshake.
type Request struct {
	Conn int // which connection of the Wire, from 1
	Xid  int32
	Op   int32
	Path string // "" for requests without one
	// Watch is the watch flag of a read (exists, getData, getChildren).
	Watch bool
}

// Reply is one frame from the server on its way to a Wire's client: the
// answer to Request, or a watch event (Request.Op == OpNotification, Path
// the event's path, EventType its type). A rule may change Err and Body.
type Reply struct {
	Request   Request
	Zxid      int64
	Err       int32
	EventType zk.EventType // notifications only
	Body      []byte       // after the reply header
}

// Verdict is a rule's decision on one frame.
type Verdict int

const (
	// Pass delivers the frame (as the rule may have changed it).
	Pass Verdict = iota
	// Break closes the connection instead of delivering the frame: a
	// request that "was sent" but never arrived, or an answer lost with
	// the connection after the server applied the request.
	Break
	// FailWrite (requests only) closes the connection and fails the
	// write of the request with a network error, which go-zookeeper hands
	// to the caller as it is: the request's outcome is unknown to it.
	FailWrite
	// Stall delivers nothing more on the connection, this frame included,
	// either way, while keeping it open: a partition nobody announces. The
	// client notices when its read timeout runs out.
	Stall
)

// Wire is a dialer that parses ZooKeeper's framing in both directions and
// lets a test decide the fate of each request and reply, and hold back new
// dials: the faults of a real network (a lost answer, a silent link, a
// reconnection that takes a while) at exactly the request a test names,
// against real servers. Rules run on the client's send and receive
// goroutines: a rule that blocks holds back everything after its frame
// on that connection (a test may want that; most rules should not). The
// zero value is not usable; use NewWire.
type Wire struct {
	base      zk.Dialer // how it dials; net.DialTimeout when nil
	mu        sync.Mutex
	onRequest func(Request) Verdict
	onReply   func(*Reply) Verdict
	gate      chan struct{} // non-nil: dials wait until it is closed
	dials     int
	closed    bool
	conns     map[*wireConn]struct{}
}

// NewWire returns a Wire that passes everything until told otherwise. It
// lets held dials go and closes its connections when the test ends.
func NewWire(t testing.TB) *Wire {
	w := &Wire{conns: map[*wireConn]struct{}{}}
	t.Cleanup(w.close)
	return w
}

// NewWireOver is NewWire for a client whose connections base dials (say,
// from a network namespace of its own, internal/netns): the Wire reads
// and judges the frames on them as on its own.
func NewWireOver(t testing.TB, base zk.Dialer) *Wire {
	w := NewWire(t)
	w.base = base
	return w
}

// Dialer returns the dialer to pass to WithDialer.
func (w *Wire) Dialer() zk.Dialer { return w.dial }

// OnRequest sets the rule for requests (nil: pass all).
func (w *Wire) OnRequest(f func(Request) Verdict) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onRequest = f
}

// OnReply sets the rule for replies and notifications (nil: pass all).
func (w *Wire) OnReply(f func(*Reply) Verdict) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onReply = f
}

// HoldDials makes new dials wait until ReleaseDials. go-zookeeper keeps
// the requests queued meanwhile: a dial that never returns is never a
// failed round of dials, which is what flushes the queue.
func (w *Wire) HoldDials() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gate == nil {
		w.gate = make(chan struct{})
	}
}

// ReleaseDials lets held and later dials go.
func (w *Wire) ReleaseDials() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gate != nil {
		close(w.gate)
		w.gate = nil
	}
}

// Dials returns how many connections the client has dialled so far.
func (w *Wire) Dials() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dials
}

// BreakAll closes every open connection of the client.
func (w *Wire) BreakAll() {
	w.mu.Lock()
	open := w.conns
	w.conns = map[*wireConn]struct{}{}
	w.mu.Unlock()
	for c := range open {
		c.Conn.Close()
	}
}

func (w *Wire) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.ReleaseDials()
	w.BreakAll()
}

func (w *Wire) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	w.mu.Lock()
	gate := w.gate
	w.mu.Unlock()
	if gate != nil {
		<-gate
	}
	base := w.base
	if base == nil {
		base = net.DialTimeout
	}
	nc, err := base(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		nc.Close()
		return nil, errors.New("zktest: wire closed")
	}
	w.dials++
	c := &wireConn{Conn: nc, w: w, id: w.dials, pending: map[int32]Request{}}
	w.conns[c] = struct{}{}
	return c, nil
}

func (w *Wire) rules() (func(Request) Verdict, func(*Reply) Verdict) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.onRequest, w.onReply
}

// errWireBroken is what a connection the Wire broke reports.
var errWireBroken = errors.New("zktest: connection broken by a wire rule")

// wireConn is one connection of a Wire.
type wireConn struct {
	net.Conn
	w  *Wire
	id int

	wrote, read bool // the handshake has gone out / come back
	rbuf        []byte

	mu      sync.Mutex
	stalled bool
	pending map[int32]Request
}

func (c *wireConn) isStalled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stalled
}

func (c *wireConn) stall() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stalled = true
}

// Write sees one request per call: go-zookeeper writes each packet whole.
func (c *wireConn) Write(p []byte) (int, error) {
	if c.isStalled() {
		return len(p), nil
	}
	if !c.wrote || len(p) < 12 {
		c.wrote = true
		return c.Conn.Write(p)
	}
	r := Request{Conn: c.id, Xid: int32(binary.BigEndian.Uint32(p[4:8])), Op: int32(binary.BigEndian.Uint32(p[8:12]))}
	if opsWithPath[r.Op] {
		r.Path = readString(p[12:])
		if at := 12 + 4 + len(r.Path); readsWithWatch[r.Op] && at < len(p) {
			r.Watch = p[at] != 0
		}
	}
	onRequest, _ := c.w.rules()
	v := Pass
	if onRequest != nil {
		v = onRequest(r)
	}
	switch v {
	case Break:
		c.Conn.Close()
		return len(p), nil
	case FailWrite:
		c.Conn.Close()
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}
	case Stall:
		c.stall()
		return len(p), nil
	}
	c.mu.Lock()
	c.pending[r.Xid] = r
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// Read delivers whole frames, each past the reply rule first.
func (c *wireConn) Read(p []byte) (int, error) {
	for len(c.rbuf) == 0 {
		frame, err := c.readFrame()
		if err != nil {
			return 0, err
		}
		if c.isStalled() {
			continue // keep reading: the client's read deadline still applies
		}
		if !c.read {
			c.read = true // the handshake's answer
			c.rbuf = frame
			break
		}
		out, v := c.judge(frame)
		switch v {
		case Break:
			c.Conn.Close()
			return 0, errWireBroken
		case Stall:
			c.stall()
			continue
		}
		c.rbuf = out
	}
	n := copy(p, c.rbuf)
	c.rbuf = c.rbuf[n:]
	return n, nil
}

func (c *wireConn) readFrame() ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.Conn, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > 64<<20 {
		return nil, fmt.Errorf("zktest: reply of %d bytes", n)
	}
	frame := make([]byte, 4+n)
	copy(frame, hdr[:])
	if _, err := io.ReadFull(c.Conn, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// judge runs the reply rule on one frame and returns the frame to deliver.
func (c *wireConn) judge(frame []byte) ([]byte, Verdict) {
	if len(frame) < 20 {
		return frame, Pass
	}
	xid := int32(binary.BigEndian.Uint32(frame[4:8]))
	if xid == -2 { // a ping's answer
		return frame, Pass
	}
	r := &Reply{Zxid: int64(binary.BigEndian.Uint64(frame[8:16])), Err: int32(binary.BigEndian.Uint32(frame[16:20])),
		Body: frame[20:]}
	if xid == -1 && len(r.Body) >= 8 {
		r.Request = Request{Conn: c.id, Xid: -1, Op: OpNotification, Path: readString(r.Body[8:])}
		r.EventType = zk.EventType(int32(binary.BigEndian.Uint32(r.Body[:4])))
	} else {
		c.mu.Lock()
		r.Request = c.pending[xid]
		delete(c.pending, xid)
		c.mu.Unlock()
	}
	_, onReply := c.w.rules()
	if onReply == nil {
		return frame, Pass
	}
	if v := onReply(r); v != Pass {
		return nil, v
	}
	out := make([]byte, 20+len(r.Body))
	copy(out, frame[:16])
	binary.BigEndian.PutUint32(out[0:4], uint32(16+len(r.Body)))
	binary.BigEndian.PutUint32(out[16:20], uint32(r.Err))
	copy(out[20:], r.Body)
	return out, Pass
}

func (c *wireConn) Close() error {
	c.w.mu.Lock()
	delete(c.w.conns, c)
	c.w.mu.Unlock()
	return c.Conn.Close()
}

// readString reads ZooKeeper's [length][bytes] string, "" if malformed.
func readString(b []byte) string {
	if len(b) < 4 {
		return ""
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	if n < 0 || 4+n > len(b) {
		return ""
	}
	return string(b[4 : 4+n])
}

// Stat field offsets in a getData reply's body, after the data.
const (
	statVersionOffset = 32 // czxid, mzxid, ctime, mtime (8 bytes each), then version
)

// GetDataVersion returns the data version in a getData reply's body, and
// SetGetDataVersion changes it: for a rule that answers as a member that
// has not applied the last write would.
func GetDataVersion(body []byte) (int32, bool) {
	off, ok := statOffset(body)
	if !ok {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(body[off+statVersionOffset:])), true
}

// SetGetDataVersion: see GetDataVersion.
func SetGetDataVersion(body []byte, v int32) bool {
	off, ok := statOffset(body)
	if ok {
		binary.BigEndian.PutUint32(body[off+statVersionOffset:], uint32(v))
	}
	return ok
}

func statOffset(body []byte) (int, bool) {
	if len(body) < 4 {
		return 0, false
	}
	n := max(int(int32(binary.BigEndian.Uint32(body))), 0) // -1: null data
	off := 4 + n
	return off, len(body) >= off+statVersionOffset+4
}
