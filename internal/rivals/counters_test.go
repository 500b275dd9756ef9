package rivals

import (
	"context"
	"testing"
	"time"
)

// TestDurableCounters: one hold of each lock moves the counters as the
// systems promise: etcd logs Raft entries (a put and a delete at least),
// Redis appends to its AOF, and a PostgreSQL advisory lock logs nothing
// of its own (the WAL may still grow a little with background work, so
// only a bound is checked: far below a commit record per transaction).
func TestDurableCounters(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hold := func(l Locker) {
		t.Helper()
		if err := l.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}

	e := etcdCluster(t)
	el := systemNamed(SystemEtcd).open(t, lockName(t), Options{})
	before, err := e.RaftIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hold(el)
	after, err := e.RaftIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 2 {
		t.Errorf("etcd: %d Raft entries for one hold, want 2 or more", after-before)
	}

	r := redisServerFor(t)
	aof0, err := r.AOFBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hold(NewRedisLock(r.Addr, lockName(t), Options{}))
	aof1, err := r.AOFBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if aof1 <= aof0 {
		t.Errorf("redis: AOF from %d to %d bytes over one hold", aof0, aof1)
	}

	pg := postgresServer(t)
	wal0, err := pg.WALBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, holds := range map[System]int{SystemPGSession: 200, SystemPGXact: 1000} {
		l := systemNamed(name).open(t, lockName(t), Options{})
		for range holds {
			hold(l)
		}
	}
	wal1, err := pg.WALBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A commit record alone is some tens of bytes: 1000 transactions that
	// logged one each would pass this bound, which leaves room for a
	// checkpoint's record and a page image of background work.
	if wal1-wal0 > 16<<10 {
		t.Errorf("postgres: %d WAL bytes over 1200 holds of advisory locks", wal1-wal0)
	}
}
