package main

// The web page's run: its contenders (sessions in this process, or child
// processes running the fencing demo's holder) and the actions the page
// asks for. The state the page shows is read from the servers in
// web_state.go.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	zkl "github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/fence"
	"github.com/zklocks/zklocks/internal/liveness"
	"github.com/zklocks/zklocks/internal/zkop"
)

type webConfig struct {
	addrs    []string
	ens      *ensemble.Ensemble // nil: not ours to kill or cut
	external string             // why the fault buttons are disabled, or ""
	path     string             // -path, or "" for a fresh one
	variant  string
	session  time.Duration
	timeout  time.Duration
	stderr   io.Writer
}

// webRun is one zklocks web run.
type webRun struct {
	cfg   webConfig
	token string
	self  string // this executable, for child holders
	admin *zkl.Session
	in    *inspector
	base  string // the fresh parent when -path is not given
	dir   string // the store's directory
	store *fence.Store

	stopRequested chan struct{}
	stopOnce      sync.Once
	kick          chan struct{}
	cancel        context.CancelFunc
	wg            sync.WaitGroup // the refresher and every contender's goroutine

	mu         sync.Mutex
	variant    webVariant
	path       string
	contenders []*webContender
	numbered   int
	events     []webEvent
	eventSeq   int64
	pending    []webEvent // from the contenders' watch callbacks, for the next refresh
	last       *webState
	prev       *webReading
	subs       map[chan []byte]struct{}
	closed     bool
	cut        int               // the member cut off, or -1
	leader     int               // the last leader seen (myid), 0 before one
	names      map[string]string // session id: contender name, for every contender the run had
}

// webContender is one contender of the page.
type webContender struct {
	name    string
	kind    string // "session" (in this process) or "process" (a child)
	sid     string // "0x..." once known
	state   string // waiting, holds, crashed, frozen, thawed, leaving
	token   int64
	session *zkl.Session
	lock    herdLock
	dialer  *webDialer
	cancel  context.CancelFunc // ends its Lock, or its child
	child   *exec.Cmd
	stdin   io.WriteCloser
	pid     int
	node    string // the child's node, once it holds
	gone    chan struct{}
	// own lists the nodes the servers have shown it owning: a watch
	// event on one of them is its own watch (behind Done), not a wake-up.
	own map[string]bool
}

func startWebRun(ctx context.Context, cfg webConfig) (*webRun, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	v, err := lookupWebVariant(cfg.variant)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	admin, err := connect(cctx, cfg.addrs, 10*time.Second)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			return nil, fmt.Errorf("the ensemble %s is unreachable: no session within -timeout %v (%v); is it up? Without -servers and ZK_SERVERS, zklocks web starts a local one",
				strings.Join(cfg.addrs, ","), cfg.timeout, err)
		}
		return nil, err
	}
	w := &webRun{cfg: cfg, token: newToken(), self: self, admin: admin,
		in:            &inspector{session: admin, conn: admin.Conn(), client: zkop.New(admin.Conn(), liveness.SessionClock(admin)), servers: cfg.addrs},
		stopRequested: make(chan struct{}), kick: make(chan struct{}, 1),
		subs: map[chan []byte]struct{}{}, variant: v, cut: -1, names: map[string]string{}}
	fail := func(err error) (*webRun, error) {
		w.removeBase()
		admin.Close()
		if w.dir != "" {
			os.RemoveAll(w.dir)
		}
		return nil, err
	}
	if cfg.path == "" {
		w.base = "/zklocks-web/run-" + newToken()[:12]
		for _, p := range []string{"/zklocks-web", w.base} {
			if _, err := admin.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return fail(fmt.Errorf("create %s: %w", p, err))
			}
		}
	}
	w.path = w.pathFor(v)
	vctx, vcancel := context.WithTimeout(ctx, cfg.timeout)
	err = w.checkPath(vctx, v, w.path)
	vcancel()
	if err != nil {
		return fail(err)
	}
	if w.dir, err = os.MkdirTemp("", "zklocks-web-"); err != nil {
		return fail(err)
	}
	if w.store, err = fence.Create(filepath.Join(w.dir, "store.json"), fence.Fenced); err != nil {
		return fail(err)
	}
	rctx, rcancel := context.WithCancel(context.WithoutCancel(ctx))
	w.cancel = rcancel
	w.addEvent(webEvent{Kind: "action", Text: fmt.Sprintf("watching %s (%s lock) on %s", w.path, v.name, strings.Join(cfg.addrs, ","))})
	w.wg.Add(1)
	go func() { defer w.wg.Done(); w.refreshLoop(rctx) }()
	return w, nil
}

// pathFor is the lock path of variant v: -path, else one per variant under
// the run's fresh parent (the naive lock's node and a queue's parent can
// not share a path).
func (w *webRun) pathFor(v webVariant) string {
	if w.cfg.path != "" {
		return w.cfg.path
	}
	return w.base + "/" + v.name
}

func (w *webRun) lockPath() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.path
}

func (w *webRun) variantName() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.variant.name
}

// checkPath refuses a path that is not a lock's of variant v: a node that
// is not a naive lock's (ephemeral) for naive, and for a queue, a node with
// children that are not lock nodes. An empty container left by an earlier
// queue is removed before the naive lock takes its path.
func (w *webRun) checkPath(ctx context.Context, v webVariant, p string) error {
	_, stat, err := w.in.client.Get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	kids, err := w.in.client.Children(ctx, p)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("list %s: %w", p, err)
	}
	if !v.queue {
		if stat.EphemeralOwner != 0 {
			return nil // a naive lock's node, held now
		}
		if len(kids) == 0 && stat.DataLength == 0 {
			if err := w.in.client.Delete(ctx, p, stat.Version); err == nil || errors.Is(err, zk.ErrNoNode) {
				return nil // an empty parent (an earlier queue's container)
			}
		}
		return usageError{fmt.Sprintf("%s is not a naive lock's path: it is a persistent node with %d children and %d bytes of data, where the naive lock creates an ephemeral node", p, len(kids), stat.DataLength)}
	}
	if stat.EphemeralOwner != 0 {
		return usageError{fmt.Sprintf("%s is not a queue's path: it is an ephemeral node (a naive lock's, held by session %#x), which can have no children", p, stat.EphemeralOwner)}
	}
	rows, err := (&inspector{session: w.admin, client: w.in.client}).read(ctx, p)
	if err != nil {
		return err
	}
	var strangers []string
	known := map[string]bool{}
	for _, c := range contenderViews(rows.rows, false, nil) {
		name := c.Node[strings.LastIndex(c.Node, "/")+1:]
		known[name] = true
		if c.Kind == kindUnknown || c.Kind == kindCurator || c.Kind == kindKazoo {
			strangers = append(strangers, name)
		}
	}
	for _, k := range kids {
		if !known[k] {
			strangers = append(strangers, k)
		}
	}
	if len(strangers) > 0 {
		slices.Sort(strangers)
		return usageError{fmt.Sprintf("%s is not a zklocks lock's path: %d of its %d children are not lock nodes (%s)", p, len(strangers), len(kids), strings.Join(strangers[:min(3, len(strangers))], ", "))}
	}
	return nil
}

// act runs the action the page asked for and returns a line for it.
func (w *webRun) act(action string, req actionRequest) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var msg string
	var err error
	switch action {
	case "variant":
		msg, err = w.setVariant(ctx, req.Variant)
	case "add":
		msg, err = w.addContender(ctx, false)
	case "add-reader":
		msg, err = w.addContender(ctx, true)
	case "add-process":
		msg, err = w.addProcess()
	case "release":
		msg, err = w.release(ctx)
	case "remove":
		msg, err = w.remove(req.Contender)
	case "crash":
		msg, err = w.crash()
	case "freeze":
		msg, err = w.freeze()
	case "kill-leader":
		msg, err = w.killLeader()
	case "cut":
		msg, err = w.cutHolder()
	case "heal":
		msg, err = w.heal()
	case "stop":
		w.stopOnce.Do(func() { close(w.stopRequested) })
		msg = "stopping: every contender ends, then zklocks web exits"
	default:
		return "", usageError{fmt.Sprintf("unknown action %q", action)}
	}
	if err != nil {
		w.addEvent(webEvent{Kind: "error", Text: action + ": " + err.Error()})
		fmt.Fprintf(w.cfg.stderr, "zklocks web: %s: %v\n", action, err)
	} else {
		w.addEvent(webEvent{Kind: "action", Text: msg})
	}
	w.kickRefresh()
	return msg, err
}

func (w *webRun) setVariant(ctx context.Context, name string) (string, error) {
	v, err := lookupWebVariant(name)
	if err != nil {
		return "", usageError{err.Error()}
	}
	w.mu.Lock()
	cs := w.contenders
	w.contenders = nil
	w.mu.Unlock()
	for _, c := range cs {
		w.end(c)
	}
	p := w.pathFor(v)
	// The contenders just closed their sessions; the member we read from
	// must have seen that before the path is judged.
	_ = w.in.client.Sync(ctx, p)
	if err := w.checkPath(ctx, v, p); err != nil {
		return "", err
	}
	w.mu.Lock()
	w.variant, w.path, w.prev = v, p, nil
	w.mu.Unlock()
	return fmt.Sprintf("variant %s on %s: every earlier contender has left", v.name, p), nil
}

// maxWebContenders bounds the page's contenders: each is a session.
const maxWebContenders = 12

func (w *webRun) nextName(prefix string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return "", errors.New("zklocks web is stopping")
	}
	if len(w.contenders) >= maxWebContenders {
		return "", fmt.Errorf("at most %d contenders at once", maxWebContenders)
	}
	w.numbered++
	return fmt.Sprintf("%s%d", prefix, w.numbered), nil
}

// addContender opens a session and calls Lock in a goroutine of its own
// (with reader, the read-write lock's read side).
func (w *webRun) addContender(ctx context.Context, reader bool) (string, error) {
	w.mu.Lock()
	v := w.variant
	w.mu.Unlock()
	kind := "session"
	if reader {
		if !v.readers {
			return "", fmt.Errorf("the %s lock has no readers: choose rwlock", v.name)
		}
		kind = "reader"
	}
	name, err := w.nextName("c")
	if err != nil {
		return "", err
	}
	c := &webContender{name: name, kind: kind, state: "waiting", dialer: &webDialer{}, gone: make(chan struct{}), own: map[string]bool{}}
	cb := func(ev zk.Event) { w.onEvent(c, ev) }
	s, err := connect(ctx, w.cfg.addrs, w.cfg.session, zk.WithEventCallback(cb), zk.WithDialer(c.dialer.dial))
	if err != nil {
		return "", err
	}
	w.mu.Lock()
	v, path := w.variant, w.path
	w.mu.Unlock()
	l, err := v.newLock(s, path, reader)
	if err != nil {
		s.Close()
		return "", err
	}
	lctx, cancel := context.WithCancel(context.Background())
	w.mu.Lock()
	c.session, c.lock, c.sid, c.cancel = s, l, fmt.Sprintf("0x%x", s.ID()), cancel
	w.names[c.sid] = c.name
	w.contenders = append(w.contenders, c)
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(c.gone)
		err := l.Lock(lctx)
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			if lctx.Err() == nil && c.state == "waiting" {
				c.state = "failed"
				w.addEventLocked(webEvent{Kind: "error", Text: fmt.Sprintf("%s: Lock: %v", c.name, err)})
			}
			return
		}
		c.state = "holds"
		c.own[webOwnNode(c)] = true
		if t, ok := l.(interface{ Token() int64 }); ok {
			c.token = t.Token()
		}
		text := fmt.Sprintf("%s holds the lock (token %#x)", c.name, c.token)
		switch {
		case reader:
			text += "; a reader, it does not write to the store"
		case v.name == "semaphore":
			text += fmt.Sprintf("; one of %d holders at once, it does not write to the store (a token fences one holder at a time)", webPermits)
		case w.store.Write(c.token, c.name, c.name+"'s update") != nil:
			text += "; its write to the fenced store was refused: a later holder wrote first"
		default:
			text += fmt.Sprintf("; it writes %q to the fenced store with its token: accepted", c.name+"'s update")
		}
		w.addEventLocked(webEvent{Kind: "acquire", Text: text, Zxid: fmt.Sprintf("%#x", c.token), Who: c.name})
		w.kickRefresh()
	}()
	call := "Lock"
	if reader {
		call = "RLock (the read side)"
	}
	return fmt.Sprintf("%s joins (session %s, timeout %v) and calls %s", name, c.sid, w.cfg.session, call), nil
}

// onEvent is a contender session's event callback: a watch that fired, or
// a change of the session's state. It must not block go-zookeeper's loop.
func (w *webRun) onEvent(c *webContender, ev zk.Event) {
	switch ev.Type {
	case zk.EventNodeCreated, zk.EventNodeDeleted, zk.EventNodeDataChanged, zk.EventNodeChildrenChanged:
		w.mu.Lock()
		own := c.lock != nil && (ev.Path == webOwnNode(c) || c.own[ev.Path])
		e := webEvent{Kind: "watch", Who: c.name, Node: ev.Path, Text: fmt.Sprintf("%s's watch on %s fired (%s): woke %s", c.name, baseName(ev.Path), webEventType(ev.Type), c.name)}
		if own {
			e.Kind = "watch-own"
			e.Text = fmt.Sprintf("%s's own watch on its node %s fired (%s): its Done, nobody woken", c.name, baseName(ev.Path), webEventType(ev.Type))
		}
		e.AtMs = time.Now().UnixMilli()
		w.pending = append(w.pending, e)
		w.mu.Unlock()
		w.kickRefresh()
	case zk.EventSession:
		if ev.State == zk.StateExpired {
			w.mu.Lock()
			w.pending = append(w.pending, webEvent{Kind: "expire", Who: c.name, AtMs: time.Now().UnixMilli(),
				Text: fmt.Sprintf("%s's session %s expired", c.name, c.sid)})
			w.mu.Unlock()
			w.kickRefresh()
		}
	}
}

// webOwnNode is the contender's own node: the lock path for a naive
// holder, its queue node for a sequential one.
func webOwnNode(c *webContender) string {
	if n, ok := ownNode(c.lock); ok {
		return n
	}
	if c.state == "holds" || c.state == "crashed" {
		if p, ok := c.lock.(interface{ Path() string }); ok {
			return p.Path()
		}
	}
	return ""
}

func webEventType(t zk.EventType) string {
	switch t {
	case zk.EventNodeCreated:
		return "created"
	case zk.EventNodeDeleted:
		return "deleted"
	case zk.EventNodeDataChanged:
		return "data changed"
	case zk.EventNodeChildrenChanged:
		return "children changed"
	}
	return t.String()
}

func baseName(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// holder returns the page's contender that holds the lock, if any.
func (w *webRun) holder() *webContender {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.contenders {
		if c.state == "holds" {
			return c
		}
	}
	return nil
}

func (w *webRun) release(ctx context.Context) (string, error) {
	c := w.holder()
	if c == nil {
		return "", errors.New("none of the page's contenders holds the lock")
	}
	if c.kind == "process" {
		return "", fmt.Errorf("%s is a child process: freeze it, or remove it", c.name)
	}
	if err := c.lock.Unlock(ctx); err != nil {
		return "", fmt.Errorf("%s: Unlock: %w", c.name, err)
	}
	w.drop(c)
	go w.end(c)
	return fmt.Sprintf("%s released the lock (Unlock deleted its node) and left", c.name), nil
}

// remove ends one contender: a waiter gives up, a holder's session closes.
func (w *webRun) remove(name string) (string, error) {
	w.mu.Lock()
	var c *webContender
	for _, x := range w.contenders {
		if x.name == name {
			c = x
		}
	}
	w.mu.Unlock()
	if c == nil {
		return "", usageError{fmt.Sprintf("no contender %q", name)}
	}
	w.drop(c)
	w.end(c)
	return fmt.Sprintf("%s left: its session is closed, so the servers delete what it owned", name), nil
}

// crash drops the holder's connection without Unlock and keeps it from
// coming back, as a crashed process would: the servers expire its session
// after its timeout and delete its node then.
func (w *webRun) crash() (string, error) {
	c := w.holder()
	if c == nil {
		return "", errors.New("none of the page's contenders holds the lock")
	}
	if c.kind == "process" {
		return "", fmt.Errorf("%s is a child process: freeze it instead", c.name)
	}
	w.mu.Lock()
	c.state = "crashed"
	w.mu.Unlock()
	c.dialer.crash()
	return fmt.Sprintf("%s crashed: its connection is gone, no Unlock; the servers will expire session %s within %v", c.name, c.sid, w.cfg.session), nil
}

// addProcess starts a contender in a child process (the fencing demo's
// holder: this executable again), which can be frozen with SIGSTOP. It
// queues for the sequential lock, and once it holds, waits; thawed, it
// writes to the fenced store with the token it had.
func (w *webRun) addProcess() (string, error) {
	w.mu.Lock()
	v, path := w.variant, w.path
	w.mu.Unlock()
	if v.name != "sequential" {
		return "", errors.New("a child-process contender runs the sequential lock: choose the sequential variant first")
	}
	name, err := w.nextName("p")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, w.self, "demo", "fencing-holder", "-servers", strings.Join(w.cfg.addrs, ","),
		"-path", path, "-session", w.cfg.session.String(), "-store", w.store.Path(), "-writer", name)
	cmd.Stderr = w.cfg.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return "", err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return "", fmt.Errorf("start a child holder: %w", err)
	}
	c := &webContender{name: name, kind: "process", state: "waiting", child: cmd, stdin: stdin, pid: cmd.Process.Pid,
		cancel: cancel, gone: make(chan struct{}), own: map[string]bool{}}
	w.mu.Lock()
	w.contenders = append(w.contenders, c)
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(c.gone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m holderMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				continue
			}
			w.childSaid(c, m)
		}
		_ = cmd.Wait()
		w.drop(c)
		w.kickRefresh()
	}()
	return fmt.Sprintf("%s: a child process (pid %d) joins the queue; once it holds, freeze it", name, c.pid), nil
}

// childSaid handles a line of a child holder's output.
func (w *webRun) childSaid(c *webContender, m holderMsg) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch m.Event {
	case "locked":
		c.state, c.token, c.sid, c.node = "holds", m.Token, fmt.Sprintf("0x%x", m.Session), m.Node
		w.names[c.sid] = c.name
		w.addEventLocked(webEvent{Kind: "acquire", Who: c.name, Zxid: fmt.Sprintf("%#x", m.Token),
			Text: fmt.Sprintf("%s (pid %d) holds the lock (token %#x); about to write to the store", c.name, c.pid, m.Token)})
	case "resumed":
		e := webEvent{Kind: "store", Who: c.name}
		if m.WriteErr != "" {
			e.Text = fmt.Sprintf("%s thawed and wrote with its old token %#x: the fenced store REFUSED it (%s)", c.name, c.token, m.WriteErr)
		} else {
			e.Text = fmt.Sprintf("%s thawed and wrote with its old token %#x: accepted", c.name, c.token)
		}
		w.addEventLocked(e)
		c.state = "leaving"
	case "error":
		w.addEventLocked(webEvent{Kind: "error", Who: c.name, Text: fmt.Sprintf("%s: %s", c.name, m.Err)})
	}
	w.kickRefresh()
}

// freeze stops the child that holds the lock (SIGSTOP). The refresher
// thaws it once its session has expired and another holder has written.
func (w *webRun) freeze() (string, error) {
	c := w.holder()
	if c == nil {
		return "", errors.New("none of the page's contenders holds the lock")
	}
	if c.kind != "process" {
		return "", fmt.Errorf("%s is a session in this process, which SIGSTOP would freeze with the page: add a child-process contender (p) and freeze it when it holds", c.name)
	}
	if err := c.child.Process.Signal(syscall.SIGSTOP); err != nil {
		return "", err
	}
	w.mu.Lock()
	c.state = "frozen"
	w.mu.Unlock()
	return fmt.Sprintf("%s (pid %d) frozen with SIGSTOP inside its critical section, about to write with token %#x; its session %s will expire", c.name, c.pid, c.token, c.sid), nil
}

// thaw lets a frozen child run on (SIGCONT).
func (w *webRun) thaw(c *webContender) {
	if c.state != "frozen" {
		return
	}
	c.state = "thawed"
	_ = c.child.Process.Signal(syscall.SIGCONT)
	w.addEventLocked(webEvent{Kind: "action", Who: c.name,
		Text: fmt.Sprintf("%s thaws (SIGCONT) and finishes the write it had begun, with token %#x", c.name, c.token)})
}

func (w *webRun) faultsOK() error {
	if w.cfg.ens == nil {
		return errors.New(w.cfg.external)
	}
	return nil
}

func (w *webRun) killLeader() (string, error) {
	if err := w.faultsOK(); err != nil {
		return "", err
	}
	i, err := w.cfg.ens.Leader()
	if err != nil {
		return "", err
	}
	if err := w.cfg.ens.Kill(i); err != nil {
		return "", err
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		err := w.cfg.ens.Restart(i)
		switch {
		case errors.Is(err, ensemble.ErrClosed):
		case err != nil:
			w.addEvent(webEvent{Kind: "error", Text: fmt.Sprintf("member %d did not come back: %v", i+1, err)})
		default:
			w.addEvent(webEvent{Kind: "member", Text: fmt.Sprintf("member %d restarted and rejoined as a follower", i+1)})
		}
		w.kickRefresh()
	}()
	return fmt.Sprintf("member %d, the leader, killed (SIGKILL); the others elect a new leader; it restarts in the background", i+1), nil
}

// cutHolder cuts the member the holder's session is connected to off from
// the others, silently (packets dropped): chapter 5's follower cut.
func (w *webRun) cutHolder() (string, error) {
	if err := w.faultsOK(); err != nil {
		return "", err
	}
	c := w.holder()
	if c == nil {
		return "", errors.New("none of the page's contenders holds the lock")
	}
	member := -1
	for i, addr := range w.cfg.addrs { // which member its session is connected to, now
		if out, err := ensemble.FourLetter(addr, "cons"); err == nil && slices.Contains(parseConsSessions(out), c.sid) {
			member = i
		}
	}
	if member < 0 {
		return "", fmt.Errorf("%s's session %s is not among any member's connections (cons): it is between members; try again", c.name, c.sid)
	}
	var others []int
	for i := range w.cfg.ens.Size() {
		if i != member {
			others = append(others, i)
		}
	}
	if err := w.cfg.ens.PartitionSilently(others); err != nil {
		return "", err
	}
	w.mu.Lock()
	w.cut = member
	w.mu.Unlock()
	return fmt.Sprintf("member %d, which %s is connected to, is cut off from the others (silently: packets dropped); it stops serving after syncLimit", member+1, c.name), nil
}

func (w *webRun) heal() (string, error) {
	if err := w.faultsOK(); err != nil {
		return "", err
	}
	if err := w.cfg.ens.Heal(); err != nil {
		return "", err
	}
	w.mu.Lock()
	w.cut = -1
	w.mu.Unlock()
	return "the links between members are healed", nil
}

// drop takes c off the page's list.
func (w *webRun) drop(c *webContender) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.contenders = slices.DeleteFunc(w.contenders, func(x *webContender) bool { return x == c })
}

// end stops a contender and waits until it is gone: its Lock cancelled
// and its session closed, or its child process killed and reaped.
func (w *webRun) end(c *webContender) {
	if c.child != nil {
		_ = c.child.Process.Signal(syscall.SIGCONT)
		c.stdin.Close()
		c.cancel() // kills the child
		<-c.gone
		return
	}
	c.cancel()
	<-c.gone
	c.session.Close() // closeSession: the servers delete its nodes at once
	c.dialer.crash()
}

// close ends every contender, the refresher and the admin session, and
// removes the fresh parent path and the store's directory.
func (w *webRun) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	cs := w.contenders
	w.contenders = nil
	cut := w.cut
	w.mu.Unlock()
	for _, c := range cs {
		w.end(c)
	}
	if cut >= 0 && w.cfg.ens != nil {
		_ = w.cfg.ens.Heal()
	}
	w.cancel()
	w.wg.Wait()
	w.closeStreams()
	w.removeBase()
	w.admin.Close()
	os.RemoveAll(w.dir)
}

// removeBase deletes the run's fresh parent, once the contenders' closed
// sessions have taken their nodes with them, and /zklocks-web if empty.
func (w *webRun) removeBase() {
	if w.base == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn := w.admin.Conn()
	for _, v := range webVariants {
		if v.queue {
			removeWhenEmpty(ctx, conn, w.base+"/"+v.name)
		}
	}
	removeWhenEmpty(ctx, conn, w.base)
	_ = conn.Delete("/zklocks-web", -1) // others' runs may still use it
}

// webDialer dials as net.DialTimeout does and can crash: close the
// connection and refuse new ones, as a process that died would.
type webDialer struct {
	mu   sync.Mutex
	dead bool
	conn net.Conn
}

var errWebCrashed = errors.New("crashed on the page")

func (d *webDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return nil, errWebCrashed
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	d.conn = c
	return c, nil
}

func (d *webDialer) crash() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dead = true
	if d.conn != nil {
		d.conn.Close()
	}
}
