package rivals

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestNotInstalled: a missing program fails the start with an error that
// wraps ErrNotInstalled and names the install script.
func TestNotInstalled(t *testing.T) {
	missing := t.TempDir() + "/missing"
	t.Setenv("PATH", t.TempDir()) // initdb and postgres are looked for on PATH first
	for _, c := range []struct {
		name  string
		point *string
		start func(context.Context) error
	}{
		{"redis", &redisServer, func(ctx context.Context) error { _, err := StartRedis(ctx, RedisConfig{}); return err }},
		{"etcd", &etcdServer, func(ctx context.Context) error { _, err := StartEtcd(ctx); return err }},
		{"postgres", &pgBinDirs, func(ctx context.Context) error { _, err := StartPostgres(ctx); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			old := *c.point
			*c.point = missing
			defer func() { *c.point = old }()
			err := c.start(context.Background())
			if !errors.Is(err, ErrNotInstalled) {
				t.Fatalf("start without the program: %v, want ErrNotInstalled", err)
			}
			if !strings.Contains(err.Error(), "scripts/install-rivals.sh") {
				t.Errorf("the error does not say how to install: %v", err)
			}
		})
	}
}

// TestPauseResumeKill: a paused server answers nothing and keeps its
// data; resumed, it answers again; killed, it is gone.
func TestPauseResumeKill(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := StartRedis(ctx, RedisConfig{})
	if err != nil {
		cannotStart(t, "redis-server", err)
	}
	defer r.Close()
	c := newRedisClient(r.Addr)
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = ping(pctx, r.Addr)
	pcancel()
	if err == nil {
		t.Fatal("a paused server answered PING")
	}
	if err := r.Resume(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("after Resume: %q, %v", v, err)
	}
	if err := r.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Exited():
	default:
		t.Fatal("Kill returned before the server exited")
	}
	if err := ping(ctx, r.Addr); err == nil {
		t.Fatal("a killed server answered PING")
	}
}

// TestFakeClock: a jump of the fake clock expires a key early, under a
// lock that still believes it holds: the Redlock critique's first step.
func TestFakeClock(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := StartRedis(ctx, RedisConfig{FakeClock: true, ClockOffset: time.Hour})
	if err != nil {
		cannotStart(t, "redis-server under libfaketime", err)
	}
	defer r.Close()
	c := newRedisClient(r.Addr)
	defer c.Close()
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ahead := time.Until(now); ahead < 59*time.Minute || ahead > 61*time.Minute {
		t.Fatalf("the server's clock is %v ahead, want an hour", ahead)
	}

	l := NewRedisLock(r.Addr, lockName(t), Options{TTL: time.Minute})
	defer l.Close()
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.SetClockOffset(time.Hour + 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	other := NewRedisLock(r.Addr, lockName(t), Options{TTL: time.Minute})
	defer other.Close()
	octx, ocancel := context.WithTimeout(ctx, 2*time.Second)
	defer ocancel()
	if err := other.Lock(octx); err != nil {
		t.Fatalf("after the jump the key should have expired: %v", err)
	}
	if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("the first holder's Unlock: %v, want ErrNotHeld", err)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLostHold: when the servers have let a hold go (here its key is
// deleted behind its back, as an expired TTL or lease would), Unlock says
// so instead of succeeding.
func TestLostHold(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, s := range systems() {
		if s.name == SystemPGSession || s.name == SystemPGXact {
			continue // nothing to delete behind their back: their hold is the connection's
		}
		t.Run(string(s.name), func(t *testing.T) {
			l := s.open(t, lockName(t), Options{})
			if err := l.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			switch l := l.(type) {
			case *EtcdLock:
				if _, err := l.client.Delete(ctx, l.mutex.Key()); err != nil {
					t.Fatal(err)
				}
			case *RedisLock:
				if err := l.client.Del(ctx, l.key).Err(); err != nil {
					t.Fatal(err)
				}
			case *RedlockLock:
				for _, c := range l.clients {
					if err := c.Del(ctx, l.name).Err(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
				t.Fatalf("Unlock of a lost hold: %v, want ErrNotHeld", err)
			}
		})
	}
}

// TestEtcdLeaseEnds: when the servers end the session's lease (as they do
// when a holder stops renewing it for its TTL), the hold is gone, Unlock
// says so, and the next Lock opens a new session and succeeds.
func TestEtcdLeaseEnds(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := systemNamed(SystemEtcd)
	// A short lease: its keep-alives, and so the news of its end, come every TTL/3.
	l := s.open(t, lockName(t), Options{TTL: 3 * time.Second}).(*EtcdLock)
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	first := l.Token()
	old := l.session
	if _, err := l.client.Revoke(ctx, old.Lease()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-old.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end after its lease was revoked")
	}
	if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock after the lease ended: %v, want ErrNotHeld", err)
	}
	if err := l.Lock(ctx); err != nil {
		t.Fatalf("Lock after the lease ended: %v", err)
	}
	if l.session == old || l.Token() <= first {
		t.Errorf("new session %v, token %d after %d", l.session != old, l.Token(), first)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPortTaken: a server whose port was taken between choosing and
// binding it is started again on new ports.
func TestPortTaken(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	calls := 0
	pickPorts = func(n int) ([]int, error) {
		calls++
		if calls == 1 {
			return []int{taken.Addr().(*net.TCPAddr).Port}, nil
		}
		return freePorts(n)
	}
	defer func() { pickPorts = freePorts }()
	r, err := StartRedis(ctx, RedisConfig{})
	if err != nil {
		cannotStart(t, "redis-server", err)
	}
	defer r.Close()
	if calls != 2 || r.Addr == taken.Addr().String() {
		t.Fatalf("%d port draws, server on %s (the taken port is %s)", calls, r.Addr, taken.Addr())
	}
}
