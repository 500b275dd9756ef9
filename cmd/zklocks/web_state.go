package main

// What the web page shows, read from the servers: the members (4lw srvr
// and cons), the lock's queue (the inspect command's reader), the watches
// (4lw wchc, parsed as the herd demo does) and the fenced store. Each
// reading is compared with the one before it to make the timeline.

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/fence"
)

// webState is what the page draws: one JSON object per server-sent event.
type webState struct {
	Variant    string             `json:"variant"`
	Path       string             `json:"path"`
	Variants   []string           `json:"variants"`
	Members    []webMember        `json:"members"`
	Queue      []webNode          `json:"queue"`
	Waiters    []webWaiter        `json:"waiters"`
	Contenders []webContenderView `json:"contenders"`
	Store      webStoreView       `json:"store"`
	Events     []webEvent         `json:"events"`
	Disabled   map[string]string  `json:"disabled"` // action: why it is disabled
	Error      string             `json:"error"`    // the lock could not be read
	ReadAtMs   int64              `json:"read_at_ms"`
	Stopping   bool               `json:"stopping"`
}

type webMember struct {
	Index       int      `json:"index"`
	ID          int      `json:"id"` // myid: index+1
	Addr        string   `json:"addr"`
	Up          bool     `json:"up"`
	Mode        string   `json:"mode"` // leader, follower, "" (not serving)
	Zxid        string   `json:"zxid"`
	Connections int      `json:"connections"`
	Sessions    []string `json:"sessions"` // from cons
	Error       string   `json:"error,omitempty"`
	Cut         bool     `json:"cut"`
}

// webNode is one node of the lock: the naive lock's node, or a queue node.
type webNode struct {
	Node      string   `json:"node"` // base name
	Path      string   `json:"path"`
	Seq       *int64   `json:"seq"`
	Token     string   `json:"token"` // czxid, hex
	Session   string   `json:"session"`
	Member    int      `json:"member"` // id of the member its session is connected to, 0 unknown
	Contender string   `json:"contender"`
	Role      string   `json:"role"`    // holds, waits
	Watches   []string `json:"watches"` // base names of the lock's nodes its session watches
	CtimeMs   int64    `json:"ctime_ms"`
	Kind      string   `json:"kind"`
}

// webWaiter is a session that waits without a node (the naive lock's
// waiters): it shows only in the servers' watch lists.
type webWaiter struct {
	Session   string   `json:"session"`
	Contender string   `json:"contender"`
	Member    int      `json:"member"`
	Watches   []string `json:"watches"`
}

type webContenderView struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Session string `json:"session"`
	State   string `json:"state"`
	Pid     int    `json:"pid,omitempty"`
}

type webStoreView struct {
	MaxToken string       `json:"max_token"`
	Value    string       `json:"value"`
	Log      []webAttempt `json:"log"`
}

type webAttempt struct {
	Writer   string `json:"writer"`
	Token    string `json:"token"`
	Value    string `json:"value"`
	Accepted bool   `json:"accepted"`
}

// webEvent is one line of the timeline.
type webEvent struct {
	ID       int64  `json:"id"`
	Kind     string `json:"kind"` // create, delete, watch, watch-own, expire, leader, member, acquire, store, action, error
	Text     string `json:"text"`
	Zxid     string `json:"zxid"`
	Who      string `json:"who,omitempty"`
	Node     string `json:"node,omitempty"`
	AtMs     int64  `json:"at_ms"`     // when zklocks web learnt of it
	CommitMs int64  `json:"commit_ms"` // the server's commit time, when known (a create's ctime)
}

// webReading is one reading of the servers, before it is compared.
type webReading struct {
	path     string
	members  []webMember
	watches  map[string][]string // session: watched paths (wchc, all members)
	nodes    []contenderView
	pzxid    int64 // of the parent of the lock's nodes
	lockErr  error
	store    fence.State
	storeErr error
}

// read takes a reading. Members that do not answer are marked, not fatal.
func (w *webRun) read(ctx context.Context, v webVariant, p string) *webReading {
	r := &webReading{path: p, members: make([]webMember, len(w.cfg.addrs)), watches: map[string][]string{}}
	wchc := make([]string, len(w.cfg.addrs))
	var wg sync.WaitGroup
	for i, addr := range w.cfg.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := webMember{Index: i, ID: i + 1, Addr: addr, Sessions: []string{}}
			st, err := ensemble.ServerStatus(addr)
			if err != nil && strings.Contains(err.Error(), "unexpected srvr answer") {
				// It runs, and answers nothing yet: an election, or a start.
				m.Up, m.Error = true, "running, but not serving: no quorum (electing?)"
				r.members[i] = m
				return
			}
			if err != nil {
				m.Error = strings.TrimPrefix(err.Error(), "ensemble: ")
				r.members[i] = m
				return
			}
			m.Up, m.Mode, m.Zxid, m.Connections = true, st.Mode, fmt.Sprintf("%#x", st.Zxid), st.Connections
			if !st.Serving() {
				m.Error = "running, but not serving: no quorum"
			}
			if out, err := ensemble.FourLetter(addr, "cons"); err == nil {
				m.Sessions = parseConsSessions(out)
			}
			if out, err := ensemble.FourLetter(addr, "wchc"); err == nil {
				wchc[i] = out
			}
			r.members[i] = m
		}()
	}
	var lockRows lockRead
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := w.in.client.Sync(ctx, "/"); err != nil {
			r.lockErr = fmt.Errorf("sync: %w", err)
			return
		}
		lockRows, r.lockErr = w.in.read(ctx, p)
		if r.lockErr != nil {
			return
		}
		parent := p
		if !v.queue {
			parent = path.Dir(p)
		}
		if _, st, err := w.in.client.Get(ctx, parent); err == nil {
			r.pzxid = st.Pzxid
		}
	}()
	r.store, r.storeErr = w.store.State()
	wg.Wait()
	for _, out := range wchc {
		parseWchc(out, r.watches)
	}
	if r.lockErr == nil {
		naive := lockRows.view.Layout != nil && *lockRows.view.Layout == layoutNode
		r.nodes = contenderViews(lockRows.rows, naive, nil)
	}
	return r
}

var consSession = regexp.MustCompile(`sid=(0x[0-9a-f]+)`)

// parseConsSessions lists the session ids in a cons answer.
func parseConsSessions(out string) []string {
	sids := []string{}
	for _, m := range consSession.FindAllStringSubmatch(out, -1) {
		if !slices.Contains(sids, m[1]) {
			sids = append(sids, m[1])
		}
	}
	return sids
}

func (w *webRun) refreshLoop(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		w.refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-tick.C:
		}
	}
}

func (w *webRun) kickRefresh() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// refresh reads the servers, adds what changed to the timeline, and sends
// the new state to every page.
func (w *webRun) refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	w.mu.Lock()
	v, p := w.variant, w.path
	w.mu.Unlock()
	r := w.read(ctx, v, p)
	if ctx.Err() != nil && errorsIsCanceled(ctx) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.path != p { // the variant changed while we read
		return
	}
	labels := w.names // session: contender name
	st := &webState{Variant: v.name, Path: p, Variants: webVariantNames(), Members: r.members,
		Queue: []webNode{}, Waiters: []webWaiter{}, Contenders: []webContenderView{}, ReadAtMs: time.Now().UnixMilli()}
	for i := range st.Members {
		st.Members[i].Cut = i == w.cut
	}
	memberOf := map[string]int{}
	for _, m := range r.members {
		for _, s := range m.Sessions {
			memberOf[s] = m.ID
		}
	}
	inLock := func(q string) bool { return q == p || strings.HasPrefix(q, p+"/") }
	owners := map[string]bool{}
	if r.lockErr != nil {
		st.Error = fmt.Sprintf("reading %s: %v", p, r.lockErr)
	}
	for _, n := range r.nodes {
		owners[n.Session] = true
		if c := w.contenderBySid(n.Session); c != nil {
			c.own[n.Node] = true
		}
		wn := webNode{Node: baseName(n.Node), Path: n.Node, Seq: n.Seq, Token: fmt.Sprintf("%#x", n.Token), Session: n.Session,
			Member: memberOf[n.Session], Contender: labels[n.Session], Role: n.Role, Watches: []string{}, CtimeMs: n.CtimeMs, Kind: n.Kind}
		if c := w.contenderBySid(n.Session); c != nil && !v.byIndex {
			// Readers and permits: several hold at once, as their Lock
			// calls returned; the queue's order alone does not say it.
			wn.Role = roleWaits
			if c.state == "holds" || c.state == "crashed" {
				wn.Role = roleHolds
			}
			if c.kind == "reader" {
				wn.Kind = "reader"
			}
		}
		for _, q := range r.watches[n.Session] {
			if inLock(q) && q != n.Node {
				wn.Watches = append(wn.Watches, baseName(q))
			}
		}
		st.Queue = append(st.Queue, wn)
	}
	var sids []string
	for sid := range r.watches {
		sids = append(sids, sid)
	}
	slices.Sort(sids)
	for _, sid := range sids {
		if owners[sid] || sid == fmt.Sprintf("0x%x", w.admin.ID()) {
			continue
		}
		wt := webWaiter{Session: sid, Contender: labels[sid], Member: memberOf[sid], Watches: []string{}}
		for _, q := range r.watches[sid] {
			if inLock(q) {
				wt.Watches = append(wt.Watches, baseName(q))
			}
		}
		if len(wt.Watches) > 0 {
			st.Waiters = append(st.Waiters, wt)
		}
	}
	if r.storeErr == nil {
		st.Store = webStoreView{MaxToken: fmt.Sprintf("%#x", r.store.MaxToken), Value: r.store.Value, Log: []webAttempt{}}
		for _, a := range r.store.Log {
			st.Store.Log = append(st.Store.Log, webAttempt{Writer: a.Writer, Token: fmt.Sprintf("%#x", a.Token), Value: a.Value, Accepted: a.Accepted})
		}
	}
	if w.prev != nil && w.prev.path == p && r.lockErr == nil && w.prev.lockErr == nil {
		w.diff(w.prev, r, labels)
	}
	if w.prev != nil {
		w.diffMembers(w.prev, r)
		w.diffStore(w.prev, r)
	}
	w.flushPending()
	w.afterReading(r)
	if r.lockErr == nil {
		w.prev = r
	} else if w.prev != nil {
		keep := *w.prev
		keep.members, keep.store = r.members, r.store
		w.prev = &keep
	}
	for _, c := range w.contenders {
		st.Contenders = append(st.Contenders, webContenderView{Name: c.name, Kind: c.kind, Session: c.sid, State: c.state, Pid: c.pid})
	}
	st.Disabled = w.disabledLocked(v)
	st.Events = w.events[max(0, len(w.events)-100):]
	w.last = st
	w.broadcastLocked(st)
}

func errorsIsCanceled(ctx context.Context) bool { return ctx.Err() == context.Canceled }

// diff adds the creates and deletes between two readings to the timeline.
func (w *webRun) diff(prev, next *webReading, labels map[string]string) {
	key := func(c contenderView) string { return fmt.Sprintf("%s@%d", c.Node, c.Token) }
	before := map[string]contenderView{}
	for _, c := range prev.nodes {
		before[key(c)] = c
	}
	after := map[string]bool{}
	czxids := map[int64]bool{}
	for _, c := range next.nodes {
		after[key(c)] = true
		czxids[c.Token] = true
	}
	var deleted []contenderView
	for _, c := range prev.nodes {
		if !after[key(c)] {
			deleted = append(deleted, c)
		}
	}
	for _, c := range deleted {
		who := w.label(labels, c.Session)
		e := webEvent{Kind: "delete", Node: c.Node, Who: who}
		switch {
		case len(deleted) == 1 && !czxids[next.pzxid] && next.pzxid > c.Token:
			e.Zxid = fmt.Sprintf("%#x", next.pzxid) // the parent's last child change
		default:
			e.Zxid = fmt.Sprintf("≤ %#x", next.pzxid)
		}
		e.Text = fmt.Sprintf("delete %s (%s's node, token %#x)", baseName(c.Node), who, c.Token)
		if sc := w.contenderBySid(c.Session); sc != nil && (sc.state == "crashed" || sc.state == "frozen") {
			w.addEventLocked(webEvent{Kind: "expire", Who: who, Zxid: e.Zxid,
				Text: fmt.Sprintf("session %s of %s expired: the servers heard nothing from it for %v", c.Session, who, w.cfg.session)})
			e.Text += ": the servers deleted it with the expired session"
		}
		w.addEventLocked(e)
	}
	for _, c := range next.nodes {
		if _, ok := before[key(c)]; ok {
			continue
		}
		who := w.label(labels, c.Session)
		w.addEventLocked(webEvent{Kind: "create", Node: c.Node, Who: who, Zxid: fmt.Sprintf("%#x", c.Token), CommitMs: c.CtimeMs,
			Text: fmt.Sprintf("create %s by %s (session %s): czxid %#x, its fencing token", baseName(c.Node), who, c.Session, c.Token)})
	}
}

func (w *webRun) label(labels map[string]string, sid string) string {
	if l := labels[sid]; l != "" {
		return l
	}
	return "session " + sid
}

func (w *webRun) contenderBySid(sid string) *webContender {
	for _, c := range w.contenders {
		if c.sid == sid {
			return c
		}
	}
	return nil
}

// diffMembers adds leader changes and members that stop or start
// answering to the timeline.
func (w *webRun) diffMembers(prev, next *webReading) {
	leader := func(ms []webMember) int {
		for _, m := range ms {
			if m.Mode == "leader" {
				return m.ID
			}
		}
		return 0
	}
	if w.leader == 0 {
		w.leader = leader(prev.members)
	}
	a, b := w.leader, leader(next.members)
	if a != b && b != 0 {
		w.leader = b
		from := "none"
		if a != 0 {
			from = fmt.Sprintf("member %d", a)
		}
		w.addEventLocked(webEvent{Kind: "leader", Zxid: next.members[b-1].Zxid,
			Text: fmt.Sprintf("leader change: %s → member %d (epoch %s)", from, b, epochOf(next.members[b-1].Zxid))})
	}
	for i, m := range next.members {
		if i >= len(prev.members) {
			break
		}
		was := prev.members[i]
		switch {
		case was.Up && !m.Up:
			w.addEventLocked(webEvent{Kind: "member", Text: fmt.Sprintf("member %d stopped answering: %s", m.ID, m.Error)})
		case !was.Up && m.Up:
			w.addEventLocked(webEvent{Kind: "member", Text: fmt.Sprintf("member %d answers again (%s)", m.ID, orNotServing(m.Mode))})
		case was.Mode != "" && m.Up && m.Mode == "":
			w.addEventLocked(webEvent{Kind: "member", Text: fmt.Sprintf("member %d stopped serving: no quorum", m.ID)})
		case was.Up && was.Mode == "" && m.Mode != "":
			w.addEventLocked(webEvent{Kind: "member", Text: fmt.Sprintf("member %d serves again, as %s", m.ID, m.Mode)})
		}
	}
}

func orNotServing(mode string) string {
	if mode == "" {
		return "not serving"
	}
	return mode
}

func epochOf(zxid string) string {
	var z int64
	if _, err := fmt.Sscanf(zxid, "0x%x", &z); err != nil {
		return "?"
	}
	return fmt.Sprint(z >> 32)
}

// diffStore adds the writes the store refused to the timeline.
func (w *webRun) diffStore(prev, next *webReading) {
	if next.storeErr != nil {
		return
	}
	for _, a := range next.store.Log[min(len(prev.store.Log), len(next.store.Log)):] {
		if !a.Accepted {
			w.addEventLocked(webEvent{Kind: "store", Who: a.Writer,
				Text: fmt.Sprintf("the fenced store REFUSED %s's write %q: token %#x is older than %#x, the highest it has seen", a.Writer, a.Value, a.Token, next.store.MaxToken)})
		}
	}
}

// flushPending moves the watch events of the contenders' sessions into the
// timeline, each with the zxid of the delete that fired it when known.
func (w *webRun) flushPending() {
	for _, e := range w.pending {
		if e.Node != "" {
			for i := len(w.events) - 1; i >= 0 && i >= len(w.events)-50; i-- {
				if d := &w.events[i]; d.Kind == "delete" && d.Node == e.Node {
					e.Zxid = d.Zxid
					// The delete was committed before it fired the watch;
					// the reading that saw it came later.
					d.AtMs = min(d.AtMs, e.AtMs)
					break
				}
			}
		}
		w.addEventLocked(e)
	}
	w.pending = nil
}

// afterReading moves the contenders on: a crashed one whose session the
// servers expired is closed; a frozen child whose session expired is
// thawed once another holder has written to the store (or nobody waits).
func (w *webRun) afterReading(r *webReading) {
	if r.lockErr != nil {
		return
	}
	owns := map[string]bool{}
	for _, n := range r.nodes {
		owns[n.Session] = true
	}
	for _, c := range slices.Clone(w.contenders) {
		switch {
		case c.state == "crashed" && !owns[c.sid]:
			w.contenders = slices.DeleteFunc(w.contenders, func(x *webContender) bool { return x == c })
			w.wg.Add(1)
			go func() { defer w.wg.Done(); w.end(c) }()
		case c.state == "frozen" && !owns[c.sid]:
			others := false
			for _, o := range w.contenders {
				others = others || (o != c && o.state != "crashed")
			}
			if r.store.MaxToken > c.token || !others {
				w.thaw(c)
			}
		}
	}
}

// disabledLocked says which actions cannot run now, and why.
func (w *webRun) disabledLocked(v webVariant) map[string]string {
	d := map[string]string{}
	if w.cfg.external != "" {
		for _, a := range []string{"kill-leader", "cut", "heal"} {
			d[a] = w.cfg.external
		}
	}
	var h *webContender
	for _, c := range w.contenders {
		if c.state == "holds" {
			h = c
		}
	}
	if h == nil {
		for _, a := range []string{"release", "crash", "freeze", "cut"} {
			if d[a] == "" {
				d[a] = "none of the page's contenders holds the lock"
			}
		}
	} else if h.kind == "process" {
		d["release"] = h.name + " is a child process: freeze it, or remove it"
		d["crash"] = h.name + " is a child process: freeze it instead"
	} else {
		d["freeze"] = "the holder is a session in this process; SIGSTOP needs a child process: add one (p)"
	}
	if !v.readers {
		d["add-reader"] = "only the read-write lock has readers: choose rwlock"
	}
	if v.name != "sequential" {
		d["add-process"] = "a child-process contender runs the sequential lock: choose sequential"
		if d["freeze"] == "" {
			d["freeze"] = d["add-process"]
		}
	}
	if w.cut < 0 && d["heal"] == "" {
		d["heal"] = "no member is cut off"
	}
	return d
}

func (w *webRun) addEvent(e webEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.addEventLocked(e)
}

// maxWebEvents bounds the timeline kept in memory.
const maxWebEvents = 500

func (w *webRun) addEventLocked(e webEvent) {
	w.eventSeq++
	e.ID = w.eventSeq
	if e.AtMs == 0 {
		e.AtMs = time.Now().UnixMilli()
	}
	w.events = append(w.events, e)
	if e.Kind == "member" || e.Kind == "leader" {
		// What happens to the servers is said on stderr too; a failed
		// action is said there by act.
		fmt.Fprintf(w.cfg.stderr, "zklocks web: %s\n", e.Text)
	}
	if len(w.events) > maxWebEvents {
		w.events = slices.Delete(w.events, 0, len(w.events)-maxWebEvents)
	}
}

// subscribe returns a channel of states (JSON), the latest first, and a
// function that ends the subscription.
func (w *webRun) subscribe() (chan []byte, func()) {
	ch := make(chan []byte, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs == nil { // streams closed: the run is stopping
		close(ch)
		return ch, func() {}
	}
	w.subs[ch] = struct{}{}
	if w.last != nil {
		if msg, err := json.Marshal(w.last); err == nil {
			ch <- msg
		}
	}
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs, ch)
	}
}

// broadcastLocked sends st to every page; a page that has not taken the
// last state yet gets this one instead.
func (w *webRun) broadcastLocked(st *webState) {
	msg, err := json.Marshal(st)
	if err != nil {
		return
	}
	for ch := range w.subs {
		select {
		case <-ch:
		default:
		}
		ch <- msg
	}
}

// closeStreams ends every page's event stream.
func (w *webRun) closeStreams() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.subs {
		close(ch)
	}
	w.subs = nil
}
