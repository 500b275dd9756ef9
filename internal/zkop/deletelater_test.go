package zkop_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zktest"
)

// DeleteLater reads our node and deletes it at the
// version it read. Our own node can be written between that read and the
// delete (the semaphore's announcement goes out in the background too),
// and the delete then fails with BadVersion: that is no reason to leave
// the node for the session's life. Here the node is written right after
// the read was answered; the node must still go, on the same session.
func TestDeleteLaterOutlastsAWriteBetweenItsReadAndItsDelete(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wd := newWired(ctx, t)
	w, conn, c, admin := wd.w, wd.conn, wd.c, wd.admin
	node, err := c.Create(ctx, wd.path+"/n", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	sid := conn.SessionID()

	var once sync.Once
	written := make(chan error, 1)
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		if r.Request.Op == zktest.OpGetData && r.Request.Path == node {
			// The read is answered; before the client sees it, our node
			// is written (by another session here: the server does not
			// tell who wrote).
			once.Do(func() {
				_, err := admin.Set(node, []byte("held"), -1)
				written <- err
			})
		}
		return zktest.Pass
	})
	c.DeleteLater(node)
	select {
	case err := <-written:
		if err != nil {
			t.Fatalf("premise: writing the node between the read and the delete: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("premise: DeleteLater never read the node")
	}

	if err := wd.awaitGone(ctx, node); err != nil {
		t.Fatalf("%s, a node of the live session %#x, left: a write between DeleteLater's read and its delete made it give up (%v)", node, sid, err)
	}
	if conn.SessionID() != sid {
		t.Errorf("premise: the session changed (%#x to %#x); the node would have gone with the old one", sid, conn.SessionID())
	}
}
