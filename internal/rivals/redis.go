package rivals

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RedisConfig shapes one Redis server.
type RedisConfig struct {
	// FakeClock starts the server under libfaketime with its clock read
	// from a file, so that SetClockOffset can make it jump while it runs
	// (key expiry follows the server's clock: a jump forward expires
	// keys early, the scenario of the critique of Redlock).
	FakeClock bool
	// ClockOffset is the offset the fake clock starts with.
	ClockOffset time.Duration
}

// Redis is one redis-server on a free loopback port, with its own data
// directory. Its durability is what Redis's own documentation suggests
// for a store that should survive a crash: an append-only file
// (appendonly yes) fsynced once a second (appendfsync everysec), so a
// crash or a power cut loses at most about a second of writes, locks
// included. Snapshots (save) are off: the AOF alone is the durable copy.
type Redis struct {
	Addr string
	*Process

	dir       string
	clockFile string
	bin       string
	env       []string // nil: this process's environment
}

// redisServer is the program StartRedis runs; a test may point it
// elsewhere.
var redisServer = "redis-server"

// StartRedis starts one Redis server and returns once it answers PING.
func StartRedis(ctx context.Context, cfg RedisConfig) (*Redis, error) {
	return withFreshPorts(func() (*Redis, error) { return startRedis(ctx, cfg) })
}

func startRedis(ctx context.Context, cfg RedisConfig) (*Redis, error) {
	bin, err := lookPath(redisServer, "redis-server")
	if err != nil {
		return nil, err
	}
	var preload string
	if cfg.FakeClock {
		if preload, err = fakeClockPreload(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "zklocks-redis-")
	if err != nil {
		return nil, fmt.Errorf("rivals: %w", err)
	}
	ports, err := pickPorts(1)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r := &Redis{Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), dir: dir, bin: bin}
	conf := fmt.Sprintf(`bind 127.0.0.1
port %d
dir %s
daemonize no
logfile ""
appendonly yes
appendfsync everysec
save ""
`, ports[0], dir)
	if err := os.WriteFile(filepath.Join(dir, "redis.conf"), []byte(conf), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("rivals: %w", err)
	}
	if cfg.FakeClock {
		r.clockFile = filepath.Join(dir, "faketime")
		if err := r.SetClockOffset(cfg.ClockOffset); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		// FAKETIME_NO_CACHE makes every clock reading look at the file,
		// so a jump takes effect at the server's next reading.
		r.env = append(os.Environ(), "LD_PRELOAD="+preload,
			"FAKETIME_TIMESTAMP_FILE="+r.clockFile, "FAKETIME_NO_CACHE=1")
	}
	if err := r.serve(ctx); err != nil {
		if r.Process == nil {
			os.RemoveAll(dir)
		} else {
			r.Close()
		}
		return nil, err
	}
	return r, nil
}

// serve runs the server on its configuration and waits until it answers.
// A server that starts but does not answer is stopped again.
func (r *Redis) serve(ctx context.Context) error {
	cmd := exec.Command(r.bin, filepath.Join(r.dir, "redis.conf"))
	cmd.Dir = r.dir
	cmd.Env = r.env
	p, err := launch("redis "+r.Addr, filepath.Join(r.dir, "redis.log"), syscall.SIGTERM, cmd)
	if err != nil {
		return err
	}
	r.Process = p
	if err := r.waitReady(ctx); err != nil {
		p.Stop()
		return err
	}
	return nil
}

// Restart starts a killed or stopped server again, on its port and with
// its directory and configuration, so that it reads its append-only file
// back as a Redis that crashed and came back does: it holds again what
// the file held, expiry times included (the file keeps them absolute). A
// port taken in the meantime fails the restart, since the clients know
// only that address.
func (r *Redis) Restart(ctx context.Context) error {
	if r.running() {
		return fmt.Errorf("rivals: %s: Restart of a server that still runs", r.Name)
	}
	return r.serve(ctx)
}

// waitReady asks PING on a bare connection until the answer comes: a
// go-redis client would log every refused dial while the server starts.
func (r *Redis) waitReady(ctx context.Context) error {
	for {
		err := ping(ctx, r.Addr)
		if err == nil {
			err = r.isOurs(ctx)
		}
		if err == nil {
			return nil
		}
		select {
		case <-r.Exited():
			return r.exitedEarly()
		case <-ctx.Done():
			return fmt.Errorf("rivals: %s did not answer PING (%v): %w\n%s", r.Name, err, ctx.Err(), r.tail())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// SetClockOffset moves the clock of a server started with FakeClock to
// real time plus d, from its next clock reading on.
func (r *Redis) SetClockOffset(d time.Duration) error {
	if r.clockFile == "" {
		return fmt.Errorf("rivals: %s: SetClockOffset needs a server started with FakeClock", r.Addr)
	}
	// libfaketime reads "+1.5" as one and a half seconds ahead; writing a
	// new file and renaming it means the server never reads half a line.
	tmp := r.clockFile + ".new"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%+.3f\n", d.Seconds())), 0o644); err != nil {
		return fmt.Errorf("rivals: %w", err)
	}
	if err := os.Rename(tmp, r.clockFile); err != nil {
		return fmt.Errorf("rivals: %w", err)
	}
	return nil
}

// Close stops the server and removes its directory.
func (r *Redis) Close() error {
	err := r.Stop()
	return errors.Join(err, os.RemoveAll(r.dir))
}

// StartRedises starts n independent Redis servers (the Redlock setup:
// no replication between them). On error none is left running.
func StartRedises(ctx context.Context, n int) ([]*Redis, error) {
	var rs []*Redis
	for range n {
		r, err := StartRedis(ctx, RedisConfig{})
		if err != nil {
			for _, r := range rs {
				r.Close()
			}
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// fakeClockPreload is the LD_PRELOAD of a Redis with a fake clock.
//
// Debian's redis-server allocates with the system's jemalloc, and
// libfaketime cannot start inside a jemalloc process: its first clock
// call allocates, jemalloc's start reads the clock, and libfaketime
// gives up on the recursion (libfaketime issue #130); the server hangs
// before it listens. glibc's libc_malloc_debug.so, preloaded first,
// puts glibc's own malloc, free and malloc_usable_size in front of
// jemalloc's, which breaks the cycle. So the fake-clock server is the
// same Redis with glibc's allocator (INFO still names jemalloc, whose
// statistics then stay empty); locks and expiry do not touch the
// allocator.
func fakeClockPreload() (string, error) {
	ft, _ := filepath.Glob("/usr/lib/*/faketime/libfaketimeMT.so.1")
	if len(ft) == 0 {
		return "", fmt.Errorf("libfaketimeMT.so.1 not found under /usr/lib/*/faketime (Debian package faketime): %w",
			ErrNotInstalled)
	}
	var dbg []string
	for _, pat := range []string{"/lib/*/libc_malloc_debug.so.0", "/usr/lib/*/libc_malloc_debug.so.0"} {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			dbg = m
			break
		}
	}
	if len(dbg) == 0 {
		return "", errors.New("rivals: libc_malloc_debug.so.0 (glibc 2.34 or later) not found: a Redis built with " +
			"jemalloc cannot run under libfaketime without it")
	}
	// Multi-threaded libfaketime: Redis runs background threads.
	return dbg[0] + " " + ft[0], nil
}

// isOurs checks that the server answering on the port is the process
// started here: another Redis may have taken the port in the meantime,
// and then ours exits while the other answers.
func (r *Redis) isOurs(ctx context.Context) error {
	c := newRedisClient(r.Addr)
	defer c.Close()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return err
	}
	want := "process_id:" + strconv.Itoa(r.Pid())
	for _, line := range strings.Split(info, "\n") {
		if strings.TrimSpace(line) == want {
			return nil
		}
	}
	return fmt.Errorf("another server answers on %s", r.Addr)
}

func ping(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}
