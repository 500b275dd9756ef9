package faulttest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/locktest"
)

// explainLeftovers logs what can tell a node a lock forgot from a node the
// servers failed to remove, for each node left on path: when it was made
// (on the tape's clock), whether every member still has it, whether its
// owner session is one a client has now or one it saw end, and whether
// the leader still counts that session. A node of a session the clients
// saw end, which the leader no longer counts, is the servers' doing; a
// node of a live session is a lock's.
func explainLeftovers(t *testing.T, e *ensemble.Ensemble, tp *tape, v *variant, clients []*client, path string, names []string) {
	t.Helper()
	dump := leaderDump(e)
	for _, name := range names {
		var b strings.Builder
		fmt.Fprintf(&b, "left node %s:", name)
		node := name // the lock path itself, for a lock whose node it is
		if v.layout == locktest.ChildrenOfPath {
			node = path + "/" + name
		}
		owners := map[int64]bool{}
		for i, s := range e.Servers() {
			view, st := nodeOnMember(s, node, tp)
			fmt.Fprintf(&b, "\n  member %d: %s", i+1, view)
			if st != nil {
				owners[st.EphemeralOwner] = true
			}
		}
		fmt.Fprintf(&b, "\n  leader's dump: %s", dump(node))
		if len(owners) == 0 {
			b.WriteString("\n  no member has it now")
		}
		for owner := range owners {
			fmt.Fprintf(&b, "\n  owner %#x: %s", owner, whoseSession(clients, owner))
		}
		t.Log(b.String())
	}
}

// whoseSession says which client has session sid now, or saw it end.
func whoseSession(clients []*client, sid int64) string {
	for _, c := range clients {
		c.mu.Lock()
		now, at, ended := c.sid, time.Duration(0), false
		if sid != 0 {
			at, ended = c.ended[sid]
		}
		c.mu.Unlock()
		switch {
		case now == sid:
			return "the current session of client " + c.name
		case ended:
			return fmt.Sprintf("a session client %s saw end at %v", c.name, at.Round(time.Millisecond))
		}
	}
	return "no client's session"
}

// nodeOnMember is one member's own view of the node, without a sync: a
// member that missed the delete still shows it.
func nodeOnMember(server, node string, tp *tape) (string, *zk.Stat) {
	s, err := memberAlone(server)
	if err != nil {
		return err.Error(), nil
	}
	defer s.Close()
	_, st, err := s.Conn().Get(node)
	if err != nil {
		return err.Error(), nil
	}
	return fmt.Sprintf("czxid %#x owner %#x made at %v", st.Czxid, st.EphemeralOwner,
		tp.at(time.UnixMilli(st.Ctime)).Round(time.Millisecond)), st
}

// leaderDump returns a function that finds the lines of the leader's dump
// (its sessions with ephemeral nodes) naming a node; "" when the dump
// could not be read.
func leaderDump(e *ensemble.Ensemble) func(name string) string {
	i, err := e.Leader()
	if err != nil {
		return func(string) string { return "no leader: " + err.Error() }
	}
	out, err := ensemble.FourLetter(e.Servers()[i], "dump")
	if err != nil {
		return func(string) string { return err.Error() }
	}
	return func(name string) string {
		var session string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "0x") {
				session = strings.TrimSpace(line)
			}
			if strings.Contains(line, name) {
				return "listed under session " + session
			}
		}
		return "not listed (the leader counts no session holding it)"
	}
}
