package rivals

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

type quietLog struct{}

func (quietLog) Printf(context.Context, string, ...any) {}

// The servers are started once per test binary, on first use, and
// stopped by TestMain: starting a cluster per test would cost more than
// the tests themselves.
var (
	etcdOnce, redisOnce, redlockOnce, pgOnce sync.Once

	sharedEtcd     *Etcd
	sharedRedis    *Redis
	sharedRedlock  []*Redis
	sharedPostgres *Postgres

	errEtcd, errRedis, errRedlock, errPostgres error
)

func TestMain(m *testing.M) {
	// The frozen-holder test runs this binary again as its first holder.
	if IsHolder() {
		if err := RunHolder(os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	// go-redis logs every refused dial; the fault tests kill servers on
	// purpose and check what the clients return instead.
	redis.SetLogger(quietLog{})
	code := m.Run()
	var errs []error
	if sharedEtcd != nil {
		errs = append(errs, sharedEtcd.Close())
	}
	if sharedRedis != nil {
		errs = append(errs, sharedRedis.Close())
	}
	for _, r := range sharedRedlock {
		errs = append(errs, r.Close())
	}
	if sharedPostgres != nil {
		errs = append(errs, sharedPostgres.Close())
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the servers:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(ignoreServers()...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left after the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// ignoreServers are the goroutines a started server keeps: the spawner,
// which lives as long as the process, and one reaper per server.
func ignoreServers() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/zklocks/zklocks/internal/rivals.spawnLoop"),
		goleak.IgnoreAnyFunction("github.com/zklocks/zklocks/internal/rivals.(*Process).wait"),
	}
}

// verifyNoLeaks fails t if goroutines started during it outlive its
// cleanups (the Lockers' Close among them). Call it first.
func verifyNoLeaks(t *testing.T) {
	t.Helper()
	opts := append(ignoreServers(), goleak.IgnoreCurrent())
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// startTimeout bounds a server's start; a loaded machine needs seconds.
const startTimeout = 30 * time.Second

func startCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), startTimeout)
}

// cannotStart fails a test whose server would not start (an error
// wrapping ErrNotInstalled says how to install it); under -short it skips
// instead.
func cannotStart(t *testing.T, what string, err error) {
	t.Helper()
	msg := fmt.Sprintf("cannot start %s: %v", what, err)
	if testing.Short() {
		t.Skip(msg)
	}
	t.Fatal(msg)
}

func etcdCluster(t *testing.T) *Etcd {
	etcdOnce.Do(func() {
		ctx, cancel := startCtx()
		defer cancel()
		sharedEtcd, errEtcd = StartEtcd(ctx)
	})
	if errEtcd != nil {
		cannotStart(t, "the etcd cluster", errEtcd)
	}
	return sharedEtcd
}

func redisServerFor(t *testing.T) *Redis {
	redisOnce.Do(func() {
		ctx, cancel := startCtx()
		defer cancel()
		sharedRedis, errRedis = StartRedis(ctx, RedisConfig{})
	})
	if errRedis != nil {
		cannotStart(t, "redis-server", errRedis)
	}
	return sharedRedis
}

func redlockServers(t *testing.T) []string {
	redlockOnce.Do(func() {
		ctx, cancel := startCtx()
		defer cancel()
		sharedRedlock, errRedlock = StartRedises(ctx, 5)
	})
	if errRedlock != nil {
		cannotStart(t, "five redis-servers", errRedlock)
	}
	var addrs []string
	for _, r := range sharedRedlock {
		addrs = append(addrs, r.Addr)
	}
	return addrs
}

func postgresServer(t *testing.T) *Postgres {
	pgOnce.Do(func() {
		ctx, cancel := startCtx()
		defer cancel()
		sharedPostgres, errPostgres = StartPostgres(ctx)
	})
	if errPostgres != nil {
		cannotStart(t, "postgres", errPostgres)
	}
	return sharedPostgres
}

// system is one rival lock under test.
type system struct {
	name System
	// open returns a new Locker for the lock called lock, with a client of
	// its own, closed when the test ends.
	open func(t *testing.T, lock string, o Options) Locker
	// fenced: Token grows with every hold.
	fenced bool
}

func systems() []system {
	return []system{
		{name: SystemEtcd, fenced: true, open: func(t *testing.T, lock string, o Options) Locker {
			e := etcdCluster(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			l, err := NewEtcdLock(ctx, e.Endpoints(), lock, o)
			if err != nil {
				t.Fatal(err)
			}
			return closeLater(t, l)
		}},
		{name: SystemRedis, open: func(t *testing.T, lock string, o Options) Locker {
			return closeLater(t, NewRedisLock(redisServerFor(t).Addr, lock, o))
		}},
		{name: SystemRedlock, open: func(t *testing.T, lock string, o Options) Locker {
			return closeLater(t, NewRedlockLock(redlockServers(t), lock, o))
		}},
		{name: SystemPGSession, open: func(t *testing.T, lock string, _ Options) Locker {
			pg := postgresServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			l, err := NewPGSessionLock(ctx, pg.DSN(), lock)
			if err != nil {
				t.Fatal(err)
			}
			return closeLater(t, l)
		}},
		{name: SystemPGXact, open: func(t *testing.T, lock string, _ Options) Locker {
			pg := postgresServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			l, err := NewPGXactLock(ctx, pg.DSN(), lock)
			if err != nil {
				t.Fatal(err)
			}
			return closeLater(t, l)
		}},
	}
}

func systemNamed(name System) system {
	for _, s := range systems() {
		if s.name == name {
			return s
		}
	}
	panic("no system " + string(name))
}

func closeLater(t *testing.T, l Locker) Locker {
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}
