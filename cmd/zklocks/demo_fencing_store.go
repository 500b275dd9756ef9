package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	zkl "github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/fence"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/sequential"
)

// demoStore is where A and B write in one replay of the fencing demo:
// an internal/fence file (with or without the token check), or a znode
// beside the lock written with zklocks.SetIfHeld.
type demoStore struct {
	what        string   // a few words for the run's heading
	holderFlags []string // where holder A writes
	file        *fence.Store
	node        string       // the znode store's path
	admin       *zkl.Session // the znode store's own session
	close       func()
}

// openStore makes the store of kind: a file at file, or the znode node.
func (d *fencingDemo) openStore(ctx context.Context, kind, file, node string) (*demoStore, error) {
	switch kind {
	case storeFenced, storeUnfenced:
		mode := fence.Fenced
		what := "a store that checks fencing tokens"
		if kind == storeUnfenced {
			mode, what = fence.Unfenced, "a store that ignores them"
		}
		st, err := fence.Create(file, mode)
		if err != nil {
			return nil, err
		}
		return &demoStore{what: what, holderFlags: []string{"-store", file}, file: st, close: func() {}}, nil
	}
	admin, err := connect(ctx, d.addrs, d.session)
	if err != nil {
		return nil, err
	}
	if _, err := admin.Conn().Create("/zklocks-demo", nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		admin.Close()
		return nil, err
	}
	if _, err := admin.Conn().Create(node, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		admin.Close()
		return nil, err
	}
	return &demoStore{what: "a znode written with the check of the writer's lock node (zklocks.SetIfHeld)",
		holderFlags: []string{"-zk-data", node}, node: node, admin: admin,
		close: func() { _ = admin.Conn().Delete(node, -1); admin.Close() }}, nil
}

// withWhat says what a write carries: its token, or the lock's check.
func (s *demoStore) withWhat(token int64) string {
	if s.file != nil {
		return fmt.Sprintf("with token %d", token)
	}
	return "checked against its lock node"
}

// writeB is B's write.
func (s *demoStore) writeB(ctx context.Context, b *zkl.Session, l *sequential.Mutex) error {
	if s.file != nil {
		return s.file.Write(l.Token(), "B", "B's update")
	}
	_, err := zkl.SetIfHeld(ctx, b, l, s.node, []byte("B's update"), -1)
	return err
}

// report logs what the store holds and returns its value.
func (s *demoStore) report(ctx context.Context, log *demoLog) (string, error) {
	if s.file == nil {
		if _, err := s.admin.Conn().Sync(s.node); err != nil {
			return "", err
		}
		data, stat, err := s.admin.Conn().Get(s.node)
		if err != nil {
			return "", err
		}
		log.say("B: Unlock(). The znode holds %q (written %d time(s))", data, stat.Version)
		return string(data), nil
	}
	st, err := s.file.State()
	if err != nil {
		return "", err
	}
	log.say("B: Unlock(). The store holds %q (largest token accepted: %d)", st.Value, st.MaxToken)
	log.printf("  store log:\n")
	for _, a := range st.Log {
		verdict := "accepted"
		if !a.Accepted {
			verdict = "refused"
		}
		log.printf("    %-2s token %d  %-14q %s\n", a.Writer, a.Token, a.Value, verdict)
	}
	return st.Value, nil
}

// writeIfHeld is A's write to the znode store after its thaw. Its
// connection is just back, on a new session if the old one expired, so
// answers that say only that the request did not get through are tried
// again for a few seconds; the servers' own verdict ends it.
func writeIfHeld(s *zkl.Session, l *sequential.Mutex, node string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, err := zkl.SetIfHeld(ctx, s, l, node, data, -1)
		// A write onto the socket the servers closed during the freeze
		// fails with the raw network error (broken pipe): not sent either.
		retry := zkop.Transient(err) || errors.Is(err, zk.ErrSessionExpired)
		if !retry || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}
