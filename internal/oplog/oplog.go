package oplog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/liveness"
)

// Event names, the message of each record.
const (
	MsgAcquire = "acquire"
	MsgWait    = "wait"
	MsgRelease = "release"
	MsgLost    = "lost"
	MsgEvict   = "evict"
	MsgAbandon = "abandon"
	MsgReenter = "reenter"
	MsgExit    = "exit"
)

// Attribute keys.
const (
	KeyLock        = "lock"
	KeyPath        = "path"
	KeyOwner       = "owner"
	KeyNode        = "node"
	KeyToken       = "token"
	KeySession     = "session"
	KeyWaited      = "waited"
	KeyHeld        = "held"
	KeyWatch       = "watch"
	KeyAhead       = "ahead"
	KeyBehind      = "behind"
	KeyReason      = "reason"
	KeyErr         = "err"
	KeyVictim      = "victim"
	KeyVictimToken = "victim_token"
	KeyLease       = "lease"
	KeyOverdue     = "overdue"
	KeyCount       = "count"
)

// Reasons a hold is lost, the values of KeyReason.
const (
	ReasonNodeDeleted    = "node_deleted"
	ReasonSessionExpired = "session_expired"
	ReasonCutOff         = "cut_off"
	ReasonClosed         = "connection_closed"
	ReasonEvicted        = "evicted"
	ReasonLeaseExpired   = "lease_expired"
	ReasonCountWrite     = "count_write"
	ReasonError          = "error"
)

// Reason names a cause of loss: when errors.Is(err, Err), the reason is Name.
type Reason struct {
	Err  error
	Name string
}

// common are the causes every variant shares; a variant's own come first.
var common = []Reason{
	{hold.ErrNodeDeleted, ReasonNodeDeleted},
	{hold.ErrSessionExpired, ReasonSessionExpired},
	{liveness.ErrCutOff, ReasonCutOff},
	{liveness.ErrClosed, ReasonClosed},
	{zk.ErrNoNode, ReasonNodeDeleted},
	{zk.ErrSessionExpired, ReasonSessionExpired},
}

// Log is the operation log of one lock. A nil *Log is off.
type Log struct {
	l       *slog.Logger // carries lock and path (and owner)
	reasons []Reason     // the variant's own causes of loss
	since   time.Time    // set by Attempt: when the acquisition began
	cur     atomic.Pointer[Hold]
}

// New returns the Log of the lock named lock (the variant) at path, or nil
// when l is nil: logging off. reasons name the variant's own causes of
// loss, checked before the common ones.
func New(l *slog.Logger, lock, path string, reasons ...Reason) *Log {
	if l == nil {
		return nil
	}
	return &Log{l: l.With(slog.String(KeyLock, lock), slog.String(KeyPath, path)), reasons: reasons}
}

// Attempt returns a Log for one acquisition that began at since, its
// records carrying owner too unless owner is "". Current then returns the
// hold it logs. The layers built on the sequential lock use one per
// sequential Mutex they make.
func (g *Log) Attempt(owner string, since time.Time) *Log {
	if g == nil {
		return nil
	}
	l := g.l
	if owner != "" {
		l = l.With(slog.String(KeyOwner, owner))
	}
	return &Log{l: l, reasons: g.reasons, since: since}
}

// Now returns the time an operation starts, or the zero time when off.
func (g *Log) Now() time.Time {
	if g == nil {
		return time.Time{}
	}
	return time.Now()
}

// Current returns the hold this Log logged last (see Attempt), nil if none.
func (g *Log) Current() *Hold {
	if g == nil {
		return nil
	}
	return g.cur.Load()
}

// on reports whether events of level are written.
func (g *Log) on(ctx context.Context, level slog.Level) bool {
	return g != nil && g.l.Enabled(ctx, level)
}

// start is when the acquisition began: Attempt's since, or the caller's.
func (g *Log) start(t time.Time) time.Time {
	if !g.since.IsZero() {
		return g.since
	}
	return t
}

// Acquire logs that the lock was taken at node with token by session, in
// an acquisition that began at since, and returns the hold's log.
func (g *Log) Acquire(ctx context.Context, node string, token, session int64, since time.Time) *Hold {
	if g == nil {
		return nil
	}
	h := &Hold{g: g, node: node, token: token, since: time.Now()}
	g.cur.Store(h)
	if g.on(ctx, slog.LevelInfo) {
		g.l.LogAttrs(ctx, slog.LevelInfo, MsgAcquire, slog.String(KeyNode, node), slog.Int64(KeyToken, token),
			sessionAttr(session), slog.Duration(KeyWaited, h.since.Sub(g.start(since))))
	}
	return h
}

// Wait logs that a waiter (its node, "" if it has none) watches watch with
// ahead contenders before it (-1: not known) and goes to sleep.
func (g *Log) Wait(ctx context.Context, node, watch string, ahead int, session int64) {
	if !g.on(ctx, slog.LevelDebug) {
		return
	}
	attrs := make([]slog.Attr, 0, 4)
	if node != "" {
		attrs = append(attrs, slog.String(KeyNode, node))
	}
	attrs = append(attrs, slog.String(KeyWatch, watch))
	if ahead >= 0 {
		attrs = append(attrs, slog.Int(KeyAhead, ahead))
	}
	g.l.LogAttrs(ctx, slog.LevelDebug, MsgWait, append(attrs, sessionAttr(session))...)
}

// WaitBehind logs that an owner waits in this process until owner behind
// has released the lock (reentrant).
func (g *Log) WaitBehind(ctx context.Context, behind string) {
	if g.on(ctx, slog.LevelDebug) {
		g.l.LogAttrs(ctx, slog.LevelDebug, MsgWait, slog.String(KeyBehind, behind))
	}
}

// Abandon logs a Lock or TryLock that failed with err, in an acquisition
// that began at since; node is its node, "" if it had none (or none known).
func (g *Log) Abandon(ctx context.Context, node string, since time.Time, err error) {
	if !g.on(ctx, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 3)
	if node != "" {
		attrs = append(attrs, slog.String(KeyNode, node))
	}
	attrs = append(attrs, slog.Duration(KeyWaited, time.Since(g.start(since))), errAttr(err))
	g.l.LogAttrs(ctx, slog.LevelInfo, MsgAbandon, attrs...)
}

// Evict logs that the contender at node deleted victim, whose token was
// victimToken, overdue past its lease by ZooKeeper's clock.
func (g *Log) Evict(ctx context.Context, node, victim string, victimToken int64, lease, overdue time.Duration) {
	if g.on(ctx, slog.LevelWarn) {
		g.l.LogAttrs(ctx, slog.LevelWarn, MsgEvict, slog.String(KeyNode, node), slog.String(KeyVictim, victim),
			slog.Int64(KeyVictimToken, victimToken), slog.Duration(KeyLease, lease), slog.Duration(KeyOverdue, overdue))
	}
}

// Reason returns the name of the cause of loss err: the variant's own
// reasons first, then the common ones, else ReasonError.
func (g *Log) Reason(err error) string {
	if g != nil {
		for _, r := range g.reasons {
			if errors.Is(err, r.Err) {
				return r.Name
			}
		}
	}
	for _, r := range common {
		if errors.Is(err, r.Err) {
			return r.Name
		}
	}
	return ReasonError
}

// Hold is the log of one hold. A nil *Hold is off. It ends once: the first
// of Release and Lost is written, later calls are dropped.
type Hold struct {
	g     *Log
	node  string
	token int64
	since time.Time
	ended atomic.Bool
}

// end reports whether this call ends the hold (the first one does).
func (h *Hold) end() bool { return h != nil && h.ended.CompareAndSwap(false, true) }

// Release logs Unlock's release of the hold; err is what Unlock failed
// with, if anything, other than a loss.
func (h *Hold) Release(ctx context.Context, err error) {
	if !h.end() || !h.g.on(ctx, slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{slog.String(KeyNode, h.node), slog.Int64(KeyToken, h.token),
		slog.Duration(KeyHeld, time.Since(h.since))}
	if err != nil {
		attrs = append(attrs, errAttr(err))
	}
	h.g.l.LogAttrs(ctx, slog.LevelInfo, MsgRelease, attrs...)
}

// Lost logs that the hold ended without Unlock, because of cause.
func (h *Hold) Lost(ctx context.Context, cause error) {
	if !h.end() || !h.g.on(ctx, slog.LevelWarn) {
		return
	}
	h.g.l.LogAttrs(ctx, slog.LevelWarn, MsgLost, slog.String(KeyNode, h.node), slog.Int64(KeyToken, h.token),
		slog.Duration(KeyHeld, time.Since(h.since)), slog.String(KeyReason, h.g.Reason(cause)), errAttr(cause))
}

// Reenter logs a re-entry that took the depth to count.
func (h *Hold) Reenter(ctx context.Context, count int) { h.depth(ctx, MsgReenter, count) }

// Exit logs an Unlock that took the depth down to count, still held.
func (h *Hold) Exit(ctx context.Context, count int) { h.depth(ctx, MsgExit, count) }

func (h *Hold) depth(ctx context.Context, msg string, count int) {
	if h == nil || !h.g.on(ctx, slog.LevelDebug) {
		return
	}
	h.g.l.LogAttrs(ctx, slog.LevelDebug, msg, slog.String(KeyNode, h.node), slog.Int64(KeyToken, h.token),
		slog.Int(KeyCount, count))
}

func sessionAttr(sid int64) slog.Attr { return slog.String(KeySession, fmt.Sprintf("%#x", sid)) }

func errAttr(err error) slog.Attr {
	if err == nil {
		return slog.String(KeyErr, "")
	}
	return slog.String(KeyErr, err.Error())
}
