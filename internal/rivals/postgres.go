package rivals

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is one PostgreSQL server on a free loopback port, with a
// cluster of its own made by initdb in a temporary directory (its Unix
// socket lives there too). Durability is PostgreSQL's default: fsync on,
// synchronous_commit on, so a commit returns once its WAL is on disk.
// Advisory locks themselves live in shared memory only and write no WAL:
// a restart forgets every one of them.
//
// PostgreSQL refuses to run as root; run as root, the server runs as the
// system user postgres (or nobody), which then owns the directory.
type Postgres struct {
	// Port is the TCP port on 127.0.0.1.
	Port int
	*Process

	dir  string
	bin  string              // the directory of initdb and postgres
	cred *syscall.Credential // whom the server runs as; nil: this process's user
}

// pgBinDirs are where StartPostgres looks for initdb and postgres when
// they are not on PATH (Debian keeps them out of it); a test may point it
// elsewhere.
var pgBinDirs = "/usr/lib/postgresql/*/bin"

// pgUser is the database superuser initdb creates.
const pgUser = "zklocks"

// StartPostgres initialises a cluster, starts the server and returns once
// it accepts connections.
func StartPostgres(ctx context.Context) (*Postgres, error) {
	return withFreshPorts(func() (*Postgres, error) { return startPostgres(ctx) })
}

func startPostgres(ctx context.Context) (*Postgres, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := pgCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "zklocks-postgres-")
	if err != nil {
		return nil, fmt.Errorf("rivals: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("rivals: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	// --no-sync skips only initdb's final flush of the fresh cluster, which
	// a throwaway cluster does not need; the server itself runs with fsync.
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", pgUser,
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.Dir = dir
	initdb.Env = pgEnv()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("rivals: initdb: %w\n%s", err, out)
	}
	ports, err := pickPorts(1)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	pg := &Postgres{Port: ports[0], dir: dir, bin: bin, cred: cred}
	if err := pg.serve(ctx); err != nil {
		if pg.Process == nil {
			os.RemoveAll(dir)
		} else {
			pg.Close()
		}
		return nil, err
	}
	return pg, nil
}

// serve runs the server on its cluster and waits until it accepts
// connections.
func (pg *Postgres) serve(ctx context.Context) error {
	cmd := exec.Command(filepath.Join(pg.bin, "postgres"), "-D", filepath.Join(pg.dir, "data"),
		"-p", strconv.Itoa(pg.Port), "-k", pg.dir,
		"-c", "listen_addresses=127.0.0.1",
		// zklocks rivals runs up to 64 contenders of the session lock and
		// then of the transaction lock, each with a connection of its own,
		// and the backends of the first may not all have exited when the
		// second connects: room for both at once (100 refused N = 64).
		"-c", "max_connections=200", "-c", "shared_buffers=16MB",
	)
	cmd.Dir = pg.dir
	cmd.Env = pgEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	// SIGINT is PostgreSQL's fast shutdown: sessions are ended, the server
	// checkpoints and exits.
	p, err := launch("postgres 127.0.0.1:"+strconv.Itoa(pg.Port), filepath.Join(pg.dir, "postgres.log"),
		syscall.SIGINT, cmd)
	if err != nil {
		return err
	}
	pg.Process = p
	return pg.waitReady(ctx)
}

// Restart starts a killed or stopped server again on its port and
// cluster, as a crashed server is brought back: it replays its
// write-ahead log (crash recovery) before it accepts connections, and
// holds no advisory lock, since those lived in the shared memory of the
// server that died. Each backend runs in a session of its own (see
// Process), so a killed postmaster's backends outlive it for the moment
// they take to notice; a new postmaster refuses to start while one of
// them is still attached to the old shared memory, and is started again
// until ctx ends.
func (pg *Postgres) Restart(ctx context.Context) error {
	if pg.running() {
		return fmt.Errorf("rivals: %s: Restart of a server that still runs", pg.Name)
	}
	for {
		err := pg.serve(ctx)
		if err == nil || !strings.Contains(err.Error(), "is still in use") {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DSN is a connection string for the server's superuser and its postgres
// database.
func (pg *Postgres) DSN() string { return pgDSN("127.0.0.1", pg.Port) }

// pgDSN is a connection string for the superuser and the postgres
// database of the server at host and port (or of a proxy in front of it).
func pgDSN(host string, port int) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=postgres sslmode=disable", host, port, pgUser)
}

func (pg *Postgres) waitReady(ctx context.Context) error {
	for {
		try, cancel := context.WithTimeout(ctx, time.Second)
		c, err := pgx.Connect(try, pg.DSN())
		cancel()
		if err == nil {
			return c.Close(ctx)
		}
		select {
		case <-pg.Exited():
			return pg.exitedEarly()
		case <-ctx.Done():
			return fmt.Errorf("rivals: %s does not accept connections (%v): %w\n%s", pg.Name, err, ctx.Err(), pg.tail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close stops the server and removes its directory.
func (pg *Postgres) Close() error {
	err := pg.Stop()
	return errors.Join(err, os.RemoveAll(pg.dir))
}

// pgBinDir finds the directory of initdb and postgres: PATH first, then
// the newest of Debian's versioned directories.
func pgBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob(pgBinDirs)
	dirs = slices.DeleteFunc(dirs, func(d string) bool {
		_, err := os.Stat(filepath.Join(d, "postgres"))
		return err != nil
	})
	if len(dirs) == 0 {
		return "", fmt.Errorf("initdb and postgres found neither on PATH nor in %s (Debian package postgresql): %w",
			pgBinDirs, ErrNotInstalled)
	}
	slices.SortFunc(dirs, func(a, b string) int { return pgVersion(a) - pgVersion(b) })
	return dirs[len(dirs)-1], nil
}

// pgVersion reads the major version from /usr/lib/postgresql/<v>/bin.
func pgVersion(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// pgCredential is the user the server runs as: nil (this process's user)
// unless that is root, which PostgreSQL refuses.
func pgCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
		}
	}
	return nil, errors.New("rivals: running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as")
}

// pgEnv is the environment without PG* settings, which initdb and postgres
// would read.
func pgEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}
