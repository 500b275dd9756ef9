package faulttest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/bench"
	"github.com/zklocks/zklocks/election"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/multilock"
	"github.com/zklocks/zklocks/naive"
	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/rwlock"
	"github.com/zklocks/zklocks/semaphore"
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
	// permits, above one, is how many may hold at once (a semaphore):
	// the history is checked for that bound instead of for exclusion.
	permits int
	// nested says the lock nodes are children of the lock path's
	// children, one queue per child (multilock), not of the path.
	nested bool
	// shortestHold, when set, is the shortest hold the cyclers give it:
	// a semaphore's admissions follow one another through announcements,
	// so holds much shorter than a few of them never fill its permits and
	// leave its bound untested.
	shortestHold time.Duration
}

// holdOf is how long the cyclers hold v's lock when the test asks for
// hold.
func (v *variant) holdOf(hold time.Duration) time.Duration { return max(hold, v.shortestHold) }

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

// rungs are the locks beyond the mutex: the workload tests (the cycling
// contenders whose histories are checked after each fault, and the soak)
// run them beside the variants above. The tests that script one holder
// and one waiter do not: a semaphore lets the waiter in beside the
// holder, and a multilock's queues are its sequential locks'.
var rungs = []*variant{
	{
		name:    "semaphore-2",
		layout:  locktest.ChildrenOfPath,
		permits: 2,
		// Admissions about 4 ms apart here: holds of 30 ms fill both
		// permits often.
		shortestHold: 30 * time.Millisecond,
		make: func(conn *zk.Conn, path string, st time.Duration, acl []zk.ACL) (zklocks.Locker, error) {
			return semaphore.New(session(conn, st), path, 2, zklocks.WithACL(aclOr(acl)))
		},
	},
	{
		// Leader election: a term is a hold of the queue.
		name:   "election",
		layout: locktest.ChildrenOfPath,
		make: func(conn *zk.Conn, path string, st time.Duration, acl []zk.ACL) (zklocks.Locker, error) {
			return election.New(session(conn, st), path, zklocks.WithACL(aclOr(acl)))
		},
	},
	{
		name:   "multilock-2",
		layout: locktest.ChildrenOfPath,
		nested: true,
		make: func(conn *zk.Conn, path string, st time.Duration, acl []zk.ACL) (zklocks.Locker, error) {
			m, err := multilock.New(session(conn, st), []string{path + "/l0", path + "/l1"}, zklocks.WithACL(aclOr(acl)))
			if err != nil {
				return nil, err
			}
			return firstToken{m}, nil
		},
	},
}

// firstToken is a multilock as a zklocks.Locker: its Token is the first
// lock's, which every hold takes, so it grows from hold to hold.
type firstToken struct{ *multilock.Mutex }

func (f firstToken) Token() int64 { return f.Mutex.Token(f.Paths()[0]) }

// withRungs is every lock the workload tests run: the variants and the
// rungs.
func withRungs() []*variant { return append(slices.Clone(variants), rungs...) }

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
	for _, v := range withRungs() {
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
	for _, v := range withRungs() {
		names = append(names, v.name)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
		t.Errorf("duplicate variant names: %v", names)
	}
}
