package interop

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A peer is a client of another library, run as a child process that
// prints one line per hold (bench/peers).
type peer struct {
	name    string
	command func(t *testing.T, servers, path string, contenders, holds int, hold time.Duration) *exec.Cmd
}

// root is the module's root directory.
func root(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Debian's python, which python3-kazoo installs into (a python3 earlier
// on PATH, pyenv's say, does not see it).
const debianPython = "/usr/bin/python3"

const installHint = "run scripts/install-peers.sh (make test does), or: sudo apt-get install python3-kazoo libcurator-recipes-java"

func kazooPeer(extraPatterns bool) peer {
	if extraPatterns {
		return kazooDriver("kazoo+extra_lock_patterns", "--extra-lock-patterns=-lock-") // "=": argparse takes a lone "-lock-" for an option
	}
	return kazooDriver("kazoo")
}

// kazooDriver runs bench/peers/kazoo/lock_driver.py, given extra
// arguments: which recipe of kazoo's, and how it is told to see ours.
func kazooDriver(name string, extra ...string) peer {
	return peer{name: name, command: func(t *testing.T, servers, path string, contenders, holds int, hold time.Duration) *exec.Cmd {
		if err := exec.Command(debianPython, "-c", "import kazoo").Run(); err != nil {
			t.Fatalf("kazoo is not installed for %s (%v): %s", debianPython, err, installHint)
		}
		args := []string{filepath.Join(root(t), "bench/peers/kazoo/lock_driver.py"),
			"--servers", servers, "--path", path, "--contenders", strconv.Itoa(contenders),
			"--holds", strconv.Itoa(holds), "--hold-ms", strconv.FormatFloat(float64(hold)/float64(time.Millisecond), 'f', 3, 64)}
		return exec.Command(debianPython, append(args, extra...)...)
	}}
}

// curatorJars are the jars the Curator driver compiles and runs against.
var curatorJars = []string{"curator-recipes", "curator-framework", "curator-client", "zookeeper", "zookeeper-jute",
	"guava", "slf4j-api", "slf4j-nop", "netty-handler", "netty-transport", "netty-common", "netty-buffer",
	"netty-resolver", "netty-codec", "netty-transport-native-epoll", "netty-transport-native-unix-common",
	"metrics-core", "commons-lang3"}

var curatorBuild struct {
	once sync.Once
	dir  string
	err  error
}

// curatorClasspath compiles the driver once per test binary (javac, no
// build tool) and returns the class path to run it with.
func curatorClasspath(t *testing.T) string {
	var jars []string
	for _, j := range curatorJars {
		p := "/usr/share/java/" + j + ".jar"
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("Curator: %s is missing: %s", p, installHint)
		}
		jars = append(jars, p)
	}
	cp := strings.Join(jars, ":")
	curatorBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "zklocks-curator-")
		if err != nil {
			curatorBuild.err = err
			return
		}
		// Every driver in the folder: the mutex's and the read-write lock's.
		sources, _ := filepath.Glob(filepath.Join(root(t), "bench/peers/curator/*.java"))
		out, err := exec.Command("javac", append([]string{"-d", dir, "-cp", cp}, sources...)...).CombinedOutput()
		if err != nil {
			curatorBuild.err = fmt.Errorf("javac: %v: %s", err, out)
			return
		}
		curatorBuild.dir = dir
	})
	if curatorBuild.err != nil {
		t.Fatalf("Curator driver: %v (%s)", curatorBuild.err, installHint)
	}
	return curatorBuild.dir + ":" + cp
}

func curatorPeer() peer {
	return peer{name: "curator", command: func(t *testing.T, servers, path string, contenders, holds int, hold time.Duration) *exec.Cmd {
		cp := curatorClasspath(t)
		return exec.Command("java", "-cp", cp, "LockDriver", servers, path, strconv.Itoa(contenders),
			strconv.Itoa(holds), strconv.FormatInt(hold.Milliseconds(), 10))
	}}
}

// peerHold is one hold a peer reported, in wall-clock nanoseconds.
type peerHold struct {
	holder            string
	acquired, release int64
}

// runPeer starts p's driver and returns a channel closed once every
// contender is connected, and a function that waits for the driver to end
// and returns its holds, and why it failed if it did. ctx's end kills it.
func runPeer(t *testing.T, ctx context.Context, p peer, servers, path string, contenders, holds int, hold time.Duration) (ready <-chan struct{}, wait func() ([]peerHold, error)) {
	t.Helper()
	cmd := p.command(t, servers, path, contenders, holds, hold)
	cmd.Stderr = &tail{}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s driver: %v (%s)", p.name, err, installHint)
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	readyCh := make(chan struct{})
	var out []peerHold
	var problems []string
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stdout)
		closed := false
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 1 && f[0] == "ready" && !closed:
				close(readyCh)
				closed = true
			case len(f) == 4 && f[0] == "hold":
				a, err1 := strconv.ParseInt(f[2], 10, 64)
				r, err2 := strconv.ParseInt(f[3], 10, 64)
				if err1 != nil || err2 != nil {
					problems = append(problems, sc.Text())
					continue
				}
				out = append(out, peerHold{holder: f[1], acquired: a, release: r})
			case len(f) > 0 && f[0] == "error":
				problems = append(problems, sc.Text())
			}
		}
		if !closed {
			close(readyCh)
		}
	}()
	return readyCh, func() ([]peerHold, error) {
		<-scanned
		err := cmd.Wait()
		stop()
		if err != nil || len(problems) > 0 {
			return out, fmt.Errorf("%s driver: %v %v; stderr: %s", p.name, err, problems, cmd.Stderr)
		}
		return out, nil
	}
}

// tail keeps the last few kilobytes a child wrote to stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > 4096 {
		w.buf = w.buf[len(w.buf)-4096:]
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
