package faulttest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/bench"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/naive"
	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/rwlock"
	"github.com/zklocks/zklocks/sequential"
	"github.com/zklocks/zklocks/timeout"
)

// variant is one lock as the fault tests see it. The bench registry
// (bench.Names) is the list of locks this module ships; its factories are
// fixed to the bench's 10s sessions and the default ACL, so this table
// adds what fault tests need: the session timeout and ACL options, the
// sentinels, and where the nodes live. TestVariantsCoverBench keeps the
// two lists in step.
type variant struct {
	name   string
	layout locktest.Layout
	// make creates one contender on conn, whose session timeout is st; a
	// nil acl means the variant's default.
	make func(conn *zk.Conn, path string, st time.Duration, acl []zk.ACL) (zklocks.Locker, error)
	// owner, when set, carries the contender's identity in the context
	// (the reentrant lock keys re-entry by it).
	owner func(ctx context.Context, who string) context.Context
	// lease is the hold lease the variant runs with here (timeout): a
	// holder that can not renew it gives the lock up after lease.
	lease func(st time.Duration) time.Duration
}

func (v *variant) ctx(ctx context.Context, who string) context.Context {
	if v.owner == nil {
		return ctx
	}
	return v.owner(ctx, who)
}

// session is conn's zklocks.Session, told conn's timeout st.
func session(conn *zk.Conn, st time.Duration) *zklocks.Session {
	s, err := zklocks.NewSession(conn, zklocks.WithSessionTimeout(st))
	if err != nil {
		panic(err) // conn is never nil here, st never zero
	}
	return s
}

func aclOr(acl []zk.ACL) []zk.ACL {
	if acl == nil {
		return zk.WorldACL(zk.PermAll)
	}
	return acl
}

var variants = []*variant{
	{
		name:   "naive",
		layout: locktest.NodeAtPath,
		make: func(conn *zk.Conn, path string, st time.Duration, acl []zk.ACL) (zklocks.Locker, error) {
			return naive.New(session(conn, st), path, zklocks.WithACL(aclOr(acl)))
		},
	},
	{
		name:   "sequential",
		layout: locktest.ChildrenOfPath,
		make: func(conn *zk.Conn, path string, st time.Duration, acl []zk.ACL) (zklocks.Locker, error) {
			return sequential.New(session(conn, st), path, zklocks.WithACL(aclOr(acl)))
		},
	},
	reentrantVariant(reentrant.InMemory),
	reentrantVariant(reentrant.InNode),
	{
		name:   "timeout",
		layout: locktest.ChildrenOfPath,
		// The lease is the session timeout: renewed every third of it.
		make: func(conn *zk.Conn, path string, st time.Duration, acl []zk.ACL) (zklocks.Locker, error) {
			return timeout.New(session(conn, st), path, timeout.WithLease(st), zklocks.WithACL(aclOr(acl)))
		},
		lease: func(st time.Duration) time.Duration { return st },
	},
	{
		// The read-write lock's writer: the queue and its clean-up are the
		// same for readers (rwlock's own tests cover what differs).
		name:   "rwlock",
		layout: locktest.ChildrenOfPath,
		make: func(conn *zk.Conn, path string, st time.Duration, acl []zk.ACL) (zklocks.Locker, error) {
			m, err := rwlock.New(session(conn, st), path, zklocks.WithACL(aclOr(acl)))
			if err != nil {
				return nil, err
			}
			return m.Writer(), nil
		},
	},
}

func reentrantVariant(mode reentrant.CountMode) *variant {
	return &variant{
		name:   "reentrant-" + mode.String(),
		layout: locktest.ChildrenOfPath,
		make: func(conn *zk.Conn, path string, st time.Duration, acl []zk.ACL) (zklocks.Locker, error) {
			return reentrant.New(session(conn, st), path, reentrant.WithCountMode(mode), zklocks.WithACL(aclOr(acl)))
		},
		owner: reentrant.WithOwner,
	}
}

func variantNamed(name string) *variant {
	for _, v := range variants {
		if v.name == name {
			return v
		}
	}
	return nil
}

// notFaultTested are bench entries that are not locks of this module.
var notFaultTested = map[string]string{
	"zk-peer":    "go-zookeeper's own Lock, the bench's point of comparison: no ctx, no Done, no token",
	"rwlock-90r": "a mix of the read-write lock's readers and writers; the lock is fault-tested as rwlock",
	"rwlock-50r": "the same, half readers",
}

// Every lock the bench knows is fault-tested here.
func TestVariantsCoverBench(t *testing.T) {
	for _, name := range bench.Names() {
		if _, skip := notFaultTested[name]; skip {
			continue
		}
		if variantNamed(name) == nil {
			t.Errorf("bench variant %q has no entry in faulttest's variants table", name)
		}
	}
	var names []string
	for _, v := range variants {
		names = append(names, v.name)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(variants) {
		t.Errorf("duplicate variant names: %v", names)
	}
}
