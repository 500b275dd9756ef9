package zktest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// Root is the parent of every path LockPath returns. It is not created by
// LockPath; the locks create the parents they need.
const Root = "/zklocks-test"

// LockPath returns a fresh lock path for this test that no other test (or
// earlier run against the same ensemble) uses:
// Root + "/" + the test's name made safe + "-" + random hex. It does not
// contact ZooKeeper.
func LockPath(t testing.TB) string {
	t.Helper()
	return Root + "/" + safeName(t.Name()) + "-" + randomHex(6)
}

// safeName keeps letters, digits, '_' and '-' of a test name and turns
// everything else (the '/' of subtests, spaces, ...) into '_'.
func safeName(name string) string {
	const max = 80
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= max {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "test"
	}
	return b.String()
}

func randomHex(n int) string {
	buf := make([]byte, n)
	_, _ = rand.Read(buf) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(buf)
}

// Children lists path's children, sorted, or nil when path does not exist.
// Any other error fails the test. It syncs conn's server with the leader
// first, so the list reflects every write (and every session expiry)
// committed before the call, even when conn talks to a lagging follower.
func Children(t testing.TB, conn *zk.Conn, path string) []string {
	t.Helper()
	if _, err := conn.Sync(path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("zktest: sync before listing %s: %v", path, err)
	}
	kids, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		t.Fatalf("zktest: children of %s: %v", path, err)
	}
	slices.Sort(kids)
	return kids
}
