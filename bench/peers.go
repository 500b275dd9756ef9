package bench

import (
	"context"
	"crypto/sha256"
	_ "embed" // the drivers' sources
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The peer drivers of bench/peers, built into the binary so that zklocks
// bench runs them from any directory: they are written into the user's
// cache directory (the Java one compiled there with javac) on first use.
var (
	//go:embed peers/curator/LockDriver.java
	curatorSource string
	//go:embed peers/kazoo/lock_driver.py
	kazooSource string
)

// ErrPeerMissing is returned (wrapped) when a peer's client library or
// its runtime is not installed; the message says how to install it.
var ErrPeerMissing = errors.New("not installed")

// PeersInstallHint says how to get the peers' clients.
const PeersInstallHint = "run scripts/install-peers.sh, or: sudo apt-get install libcurator-recipes-java default-jdk-headless python3-kazoo"

// DebianPython is the python that Debian's python3-kazoo installs into (a
// python3 earlier on PATH, pyenv's say, does not see it).
const DebianPython = "/usr/bin/python3"

// CuratorJars are the jars of Debian's packages that the Curator driver
// compiles and runs against, in /usr/share/java.
var CuratorJars = []string{"curator-recipes", "curator-framework", "curator-client", "zookeeper", "zookeeper-jute",
	"guava", "slf4j-api", "slf4j-nop", "netty-handler", "netty-transport", "netty-common", "netty-buffer",
	"netty-resolver", "netty-codec", "netty-transport-native-epoll", "netty-transport-native-unix-common",
	"metrics-core", "commons-lang3"}

// DriverArgs is one run of a driver.
type DriverArgs struct {
	Servers    []string
	Path       string
	Contenders int
	// Acquisitions in all, shared by the contenders; when 0 the run lasts
	// Duration.
	Acquisitions         int
	Duration, Hold, Idle time.Duration
	// Warmup is how long the contenders contend, unmeasured, before the
	// driver says it is ready.
	Warmup time.Duration
	// Permits, above zero, makes the contenders take permits of the
	// peer's semaphore with that many leases instead of its mutex.
	Permits int
	// Locks, above zero, makes the contenders take that many locks at
	// once with the peer's multi-lock, under Path.
	Locks int
	// Latch makes each hold a term of the peer's leader election.
	Latch bool
	// Paths, above zero, spreads the contenders over that many lock
	// paths, Path/p0 ... (contender i on Path/p(i mod Paths)): many locks
	// at once (Config.Paths). Contenders is then every path's together.
	Paths int
}

// Driver runs a peer's lock, another library's, in a child process: a
// program of bench/peers that runs N contenders with a session each, and
// reports every hold on stdout (see the drivers' doc comments for the
// protocol).
type Driver struct {
	// Available says why the driver cannot run on this machine (wrapping
	// ErrPeerMissing, with how to install what is missing), nil if it can.
	Available func() error
	// Command is the command of a driver process, under ctx.
	Command func(ctx context.Context, a DriverArgs) (*exec.Cmd, error)
	// Warmup is how long the driver's contenders contend before its first
	// round, unmeasured (DriverArgs.Warmup).
	Warmup time.Duration
	// Hold is the command of a driver process in hold mode: one session
	// that takes n locks under dir and holds them (see MeasureHoldCost);
	// nil when the driver has none.
	Hold func(ctx context.Context, servers []string, dir string, n int) (*exec.Cmd, error)
}

// msArg is a duration in milliseconds for a driver's command line.
func msArg(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond)) }

// missing wraps ErrPeerMissing with what is missing and how to get it.
func missing(peer, what string) error {
	return fmt.Errorf("%s: %s: %w (%s)", peer, what, ErrPeerMissing, PeersInstallHint)
}

// curatorDriver runs bench/peers/curator/LockDriver.java. Its warm-up:
// a fresh JVM takes about two seconds of contention to reach Curator's
// steady rate (measured here: 4 contenders went from 44 to about 380
// acquisitions a second over the first two seconds).
var curatorDriver = &Driver{
	Warmup:    2 * time.Second,
	Available: func() error { _, err := CuratorClasspath(); return err },
	Command: func(ctx context.Context, a DriverArgs) (*exec.Cmd, error) {
		cp, err := CuratorClasspath()
		if err != nil {
			return nil, err
		}
		// The JVM's defaults, as a user of Curator would run it.
		args := []string{"-cp", cp, "LockDriver",
			strings.Join(a.Servers, ","), a.Path, fmt.Sprint(a.Contenders), "0", msArg(a.Hold),
			"--idle-ms", msArg(a.Idle), "--session-timeout-ms", fmt.Sprint(SessionTimeout.Milliseconds()),
			"--requested", "--control", "--round-robin", "--warmup-ms", fmt.Sprint(a.Warmup.Milliseconds())}
		args = append(append(append(args, stopArgs(a)...), permitArgs(a)...), pathArgs(a)...)
		return exec.CommandContext(ctx, "java", args...), nil
	},
	Hold: func(ctx context.Context, servers []string, dir string, n int) (*exec.Cmd, error) {
		cp, err := CuratorClasspath()
		if err != nil {
			return nil, err
		}
		return exec.CommandContext(ctx, "java", "-cp", cp, "LockDriver", strings.Join(servers, ","), dir, "1", "0", "0",
			"--hold-locks", fmt.Sprint(n), "--session-timeout-ms", fmt.Sprint(SessionTimeout.Milliseconds())), nil
	},
}

// kazooDriver runs bench/peers/kazoo/lock_driver.py. Python compiles
// nothing at run time (its rate is steady from the first 250ms); its
// short warm-up only evens out the first round's start.
var kazooDriver = &Driver{
	Warmup:    250 * time.Millisecond,
	Available: func() error { _, err := kazooScript(); return err },
	Command: func(ctx context.Context, a DriverArgs) (*exec.Cmd, error) {
		script, err := kazooScript()
		if err != nil {
			return nil, err
		}
		args := []string{script, "--servers", strings.Join(a.Servers, ","), "--path", a.Path,
			"--contenders", fmt.Sprint(a.Contenders), "--holds", "0", "--hold-ms", msArg(a.Hold),
			"--idle-ms", msArg(a.Idle), "--session-timeout", fmt.Sprint(SessionTimeout.Seconds()),
			"--requested", "--control", "--round-robin", "--warmup-ms", fmt.Sprint(a.Warmup.Milliseconds())}
		args = append(append(append(args, stopArgs(a)...), permitArgs(a)...), pathArgs(a)...)
		return exec.CommandContext(ctx, DebianPython, args...), nil
	},
	Hold: func(ctx context.Context, servers []string, dir string, n int) (*exec.Cmd, error) {
		script, err := kazooScript()
		if err != nil {
			return nil, err
		}
		return exec.CommandContext(ctx, DebianPython, script, "--servers", strings.Join(servers, ","), "--path", dir,
			"--contenders", "1", "--hold-locks", fmt.Sprint(n), "--session-timeout", fmt.Sprint(SessionTimeout.Seconds())), nil
	},
}

// permitArgs are the options that make a driver run the peer's
// semaphore, its multi-lock or its leader election instead of its mutex.
func permitArgs(a DriverArgs) []string {
	switch {
	case a.Permits > 0:
		return []string{"--permits", fmt.Sprint(a.Permits)}
	case a.Locks > 0:
		return []string{"--multi", fmt.Sprint(a.Locks)}
	case a.Latch:
		return []string{"--latch"}
	}
	return nil
}

// pathArgs is the option that spreads a driver's contenders over many
// lock paths.
func pathArgs(a DriverArgs) []string {
	if a.Paths > 0 {
		return []string{"--paths", fmt.Sprint(a.Paths)}
	}
	return nil
}

// stopArgs are the options that end a driver's run as the Go harness's
// Config does: a number of acquisitions in all, or a duration.
func stopArgs(a DriverArgs) []string {
	if a.Acquisitions > 0 {
		return []string{"--acquisitions", fmt.Sprint(a.Acquisitions)}
	}
	return []string{"--duration-ms", fmt.Sprint(max(a.Duration.Milliseconds(), 1))}
}

var curatorBuild struct {
	once sync.Once
	cp   string
	err  error
}

// CuratorClasspath compiles the Curator driver (javac, no build tool) once
// per process, into the user's cache directory, keyed by the source and
// the jars, so that later runs find it built, and returns the class path
// to run LockDriver with. It fails with ErrPeerMissing when javac, java
// or a jar is not installed.
func CuratorClasspath() (string, error) {
	curatorBuild.once.Do(func() { curatorBuild.cp, curatorBuild.err = buildCurator() })
	return curatorBuild.cp, curatorBuild.err
}

func buildCurator() (string, error) {
	for _, tool := range []string{"java", "javac"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", missing("curator", tool+" not found")
		}
	}
	var jars []string
	for _, j := range CuratorJars {
		p := "/usr/share/java/" + j + ".jar"
		if _, err := os.Stat(p); err != nil {
			return "", missing("curator", p+" not found")
		}
		jars = append(jars, p)
	}
	cp := strings.Join(jars, ":")
	dir, err := cached("curator", curatorSource+cp, func(tmp string) error {
		src := filepath.Join(tmp, "LockDriver.java")
		if err := os.WriteFile(src, []byte(curatorSource), 0o644); err != nil {
			return err
		}
		out, err := exec.Command("javac", "-d", tmp, "-cp", cp, src).CombinedOutput()
		if err != nil {
			return fmt.Errorf("javac: %v: %s", err, out)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("curator driver: %w", err)
	}
	return dir + ":" + cp, nil
}

var kazooBuild struct {
	once   sync.Once
	script string
	err    error
}

// kazooScript checks once per process that Debian's python has kazoo, and
// returns the path of the driver, written into the user's cache directory.
func kazooScript() (string, error) {
	kazooBuild.once.Do(func() {
		if err := exec.Command(DebianPython, "-c", "import kazoo").Run(); err != nil {
			kazooBuild.err = missing("kazoo", fmt.Sprintf("%s cannot import kazoo (%v)", DebianPython, err))
			return
		}
		dir, err := cached("kazoo", kazooSource, func(tmp string) error {
			return os.WriteFile(filepath.Join(tmp, "lock_driver.py"), []byte(kazooSource), 0o644)
		})
		kazooBuild.script, kazooBuild.err = filepath.Join(dir, "lock_driver.py"), err
	})
	return kazooBuild.script, kazooBuild.err
}

// cached returns a directory of the user's cache named after name and a
// hash of key, made by build (into a temporary directory renamed into
// place, so that two processes building at once both end up with a whole
// one) unless it is there already.
func cached(name, key string, build func(dir string) error) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	base = filepath.Join(base, "zklocks")
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(base, name+"-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(base, name+"-build-")
	if err != nil {
		return "", err
	}
	if err := build(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr != nil {
			return "", err
		}
	}
	return dir, nil
}
