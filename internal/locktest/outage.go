package locktest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/oplog"
	"github.com/zklocks/zklocks/internal/zktest"
)

// testDoneBeforeItsLog: a loss closes Done first and logs it after, so
// that a slow log handler never delays Done past the moment the hold
// must be given up. The handler here blocks on the loss record until the
// test ends.
func (s *suite) testDoneBeforeItsLog(t T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	h := &blockingHandler{msg: oplog.MsgLost, entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(h.unblock) // before the client's cleanups: they wait for the logging goroutine
	c := s.newLoggedClient(t, path, slog.New(h))
	mustLock(t, ctx, "c", c.l)
	nodes := s.requireNodes(t, admin, path, c.sid, "the holder's node")
	if err := admin.Delete(nodes[0], -1); err != nil {
		t.Fatalf("admin: delete the holder's node: %v", err)
	}
	select {
	case <-c.l.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("Done still open 10s after the holder's node was deleted, its loss being logged by a handler that blocks (entered: %v)",
			IsClosed(h.entered))
	}
	select {
	case <-h.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no loss logged 10s after Done closed")
	}
	h.unblock()
	if err := c.l.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
		t.Errorf("Unlock after the loss: %v, want %v", err, zklocks.ErrLockLost)
	}
}

// blockingHandler is a slog handler that blocks on records with message
// msg until unblock.
type blockingHandler struct {
	msg             string
	entered         chan struct{}
	release         chan struct{}
	enter, release1 sync.Once
}

func (h *blockingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *blockingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *blockingHandler) WithGroup(string) slog.Handler            { return h }

func (h *blockingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.enter.Do(func() { close(h.entered) })
		<-h.release
	}
	return nil
}

func (h *blockingHandler) unblock() { h.release1.Do(func() { close(h.release) }) }

// testHoldAfterALongWait: a waiter that becomes the holder after waiting
// most of a session timeout starts its hold with time in hand, at least
// a quarter of a session timeout before its Done may close for want of
// news from the leader: its clock of the leader was kept fresh while it
// waited, or is made fresh before Lock returns.
func (s *suite) testHoldAfterALongWait(t T) {
	st := ExpirySessionTimeout
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	a := s.newClient(t, path, 0)
	w := s.newClient(t, path, st)
	mustLock(t, ctx, "a", a.l)
	res, _ := s.lockQueued(t, ctx, ctx, admin, path, w)
	queued := time.Now()
	time.Sleep(st * 85 / 100) // the fault's schedule: w waits 0.85 of its session timeout
	mustUnlock(t, ctx, "a", a.l)
	if r := AwaitLock(t, res, 10*time.Second, "w"); r.Err != nil {
		t.Fatalf("w: Lock after a's Unlock: %v", r.Err)
	}
	acquired := time.Now()
	select {
	case <-w.l.Done():
		t.Fatalf("w: Done closed %v after Lock returned, %v after w queued (session timeout %v); want a hold that starts with at least %v in hand",
			time.Since(acquired).Round(time.Millisecond), time.Since(queued).Round(time.Millisecond), st, st/5)
	case <-time.After(st / 5):
	}
	mustUnlock(t, ctx, "w", w.l)
}
