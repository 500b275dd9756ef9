package zkop_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zktest"
)

// A create whose caller gave up (its ctx ended) is answered later, and
// the caller's clean-up may have looked for the node before that answer:
// CreateUndo must run the undo once the answer is in, when the node was
// made and when the answer was lost with the connection (the node may
// exist). Here the answer is held back until ctx has ended, then given
// or lost; either way the node must go, on the same session.
func TestCreateUndoRunsAfterALateAnswer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		verdict zktest.Verdict // the fate of the held-back answer
	}{
		{"answer delivered", zktest.Pass},
		{"answer lost with the connection", zktest.Break},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			wd := newWired(ctx, t)
			w, conn, c, admin, path := wd.w, wd.conn, wd.c, wd.admin, wd.path
			sid := conn.SessionID()

			// arrived closes when the server's answer reaches the Wire,
			// which holds it back until release closes (at the latest when
			// the test ends: a held rule would hold go-zookeeper's reader).
			arrived, release := make(chan struct{}), make(chan struct{})
			var arrive, free sync.Once
			t.Cleanup(func() { free.Do(func() { close(release) }) })
			w.OnReply(func(r *zktest.Reply) zktest.Verdict {
				if r.Request.Op != zktest.OpCreate && r.Request.Op != zktest.OpCreate2 || !strings.HasPrefix(r.Request.Path, path+"/") {
					return zktest.Pass
				}
				arrive.Do(func() { close(arrived) })
				<-release // hold back the answer, and everything after it on this connection
				return tc.verdict
			})
			undone, early := make(chan struct{}, 1), make(chan struct{}, 1)
			undo := func(ctx context.Context) (bool, error) {
				select {
				case <-release:
				default:
					early <- struct{}{} // before the answer: the order CreateUndo is for
				}
				kids, err := c.Children(ctx, path)
				if err != nil {
					return false, err
				}
				for _, k := range kids {
					if err := c.Delete(ctx, path+"/"+k, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
						return false, err
					}
				}
				undone <- struct{}{}
				return true, nil
			}
			short, giveUp := context.WithCancel(ctx)
			go func() {
				select {
				case <-arrived: // the caller gives up once the node is made
				case <-ctx.Done():
				}
				giveUp()
			}()
			_, err := c.CreateUndo(short, path+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll), undo)
			giveUp()
			if !errors.Is(err, context.Canceled) || ctx.Err() != nil {
				t.Fatalf("CreateUndo given up while its answer was held back: %v, want the ctx's cancellation", err)
			}
			if _, err := admin.Sync(path); err != nil {
				t.Fatal(err)
			}
			kids, _, err := admin.Children(path)
			if err != nil || len(kids) != 1 {
				t.Fatalf("premise: the server made the node before its answer: children %v, %v", kids, err)
			}
			free.Do(func() { close(release) })

			select {
			case <-undone:
			case <-ctx.Done():
				t.Fatalf("undo never ran after the late answer; %s left on session %#x", kids[0], sid)
			}
			if _, err := admin.Sync(path); err != nil {
				t.Fatal(err)
			}
			if kids, _, err := admin.Children(path); err != nil || len(kids) != 0 {
				t.Errorf("after the undo: children %v, %v; want none", kids, err)
			}
			select {
			case <-early:
				t.Error("the undo ran before the create's answer was in")
			default:
			}
			if conn.SessionID() != sid {
				t.Errorf("premise: the session changed (%#x to %#x); the node would have gone with the old one", sid, conn.SessionID())
			}
		})
	}
}
