package rivals

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklocks/zklocks/internal/freeport"
)

// Process is one running server process of a rival system. Every server
// runs in a process group of its own, so that a signal reaches the
// helpers it forks too, unless they leave the group: PostgreSQL's
// backends and auxiliary processes each start a session of their own
// (setsid), so a signal reaches its postmaster only. Killed, the
// postmaster leaves its backends to notice its death, which they do at
// once, and exit.
type Process struct {
	// Name says which server this is in messages ("etcd member 2").
	Name string
	// Log is the file that receives the server's output.
	Log string

	cmd      *exec.Cmd
	stopSig  syscall.Signal
	done     chan struct{} // closed once the process has exited
	waitErr  error         // Wait's result, valid once done is closed
	stopOnce sync.Once
	stopErr  error
}

// launch starts cmd with its output appended to logPath. stopSig is the
// signal that makes the server shut down cleanly and quickly.
func launch(name, logPath string, stopSig syscall.Signal, cmd *exec.Cmd) (*Process, error) {
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("rivals: %s: %w", name, err)
	}
	defer out.Close() // the child keeps its own descriptor
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = out, out
	if err := startProcess(cmd); err != nil {
		return nil, fmt.Errorf("rivals: start %s: %w", name, err)
	}
	p := &Process{Name: name, Log: logPath, cmd: cmd, stopSig: stopSig, done: make(chan struct{})}
	go p.wait()
	return p, nil
}

// wait reaps the process; it is the one goroutine a Process keeps.
func (p *Process) wait() {
	p.waitErr = p.cmd.Wait()
	close(p.done)
}

// Pid is the server's process id (and its process group's).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed once the server has exited, for whatever reason.
func (p *Process) Exited() <-chan struct{} { return p.done }

func (p *Process) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Pause freezes the server (SIGSTOP to its group): it keeps its sockets
// open and answers nothing, as a server stalled by a long GC pause, a
// swapped-out machine or a stopped VM does. Clients see timeouts, not
// closed connections.
func (p *Process) Pause() error { return p.signal(syscall.SIGSTOP) }

// Resume lets a paused server run on (SIGCONT to its group).
func (p *Process) Resume() error { return p.signal(syscall.SIGCONT) }

// Kill ends the server at once (SIGKILL to its group), as a crash or a
// power cut would, and waits until it is gone. Whatever the server had
// not made durable is lost.
func (p *Process) Kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	return p.awaitExit(10 * time.Second)
}

// Stop shuts the server down with its clean shutdown signal, and kills it
// if it has not exited after a few seconds (a paused server is resumed
// first so that it can see the signal). Calling Stop again returns the
// first call's result.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		if !p.running() {
			return
		}
		if err := p.signal(p.stopSig); err != nil {
			p.stopErr = err
			return
		}
		_ = p.signal(syscall.SIGCONT)
		select {
		case <-p.done:
			return
		case <-time.After(5 * time.Second):
		}
		p.stopErr = p.Kill()
	})
	return p.stopErr
}

func (p *Process) signal(sig syscall.Signal) error {
	if !p.running() {
		return nil
	}
	err := syscall.Kill(-p.Pid(), sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("rivals: signal %v to %s (pid %d): %w", sig, p.Name, p.Pid(), err)
	}
	return nil
}

func (p *Process) awaitExit(limit time.Duration) error {
	select {
	case <-p.done:
		return nil
	case <-time.After(limit):
		return fmt.Errorf("rivals: %s (pid %d) still runs %v after SIGKILL", p.Name, p.Pid(), limit)
	}
}

// tail returns the last lines of the server's log, for error messages.
func (p *Process) tail() string {
	data, err := os.ReadFile(p.Log)
	if err != nil || len(data) == 0 {
		return "(" + p.Name + " wrote nothing to " + p.Log + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return "--- last lines of " + p.Log + " ---\n" + strings.Join(lines, "\n")
}

// exitedEarly is the error for a server that died while it was starting.
// When its log says that a port was taken, the error wraps errPortTaken.
func (p *Process) exitedEarly() error {
	tail := p.tail()
	err := fmt.Errorf("rivals: %s exited while starting (%v)\n%s", p.Name, p.waitErr, tail)
	if strings.Contains(strings.ToLower(tail), "address already in use") {
		err = fmt.Errorf("%w: %w", errPortTaken, err)
	}
	return err
}

// errPortTaken means a port freePorts found free was taken before the
// server bound it (another test binary, a ZooKeeper ensemble).
var errPortTaken = errors.New("rivals: a port was taken between choosing and binding it")

// withFreshPorts runs start again, on ports drawn anew by start itself,
// when it fails because a port was taken.
func withFreshPorts[T any](start func() (T, error)) (T, error) {
	var v T
	var err error
	for range 3 {
		if v, err = start(); !errors.Is(err, errPortTaken) {
			break
		}
	}
	return v, err
}

// Each server is started with the parent-death signal set, so that the
// kernel kills it when this process ends without calling Close (a panic,
// a test timeout, a SIGKILL). The kernel ties that signal to the thread
// that forked the child, and Go retires threads as it likes, so every
// fork happens on one goroutine locked to its thread for good.
var (
	spawnOnce sync.Once
	spawnCh   chan spawnRequest
)

type spawnRequest struct {
	cmd  *exec.Cmd
	errc chan error
}

func startProcess(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnRequest)
		go spawnLoop(spawnCh)
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	req := spawnRequest{cmd: cmd, errc: make(chan error, 1)}
	spawnCh <- req
	return <-req.errc
}

func spawnLoop(reqs <-chan spawnRequest) {
	runtime.LockOSThread()
	for req := range reqs {
		req.errc <- req.cmd.Start()
	}
}

// pickPorts is how the servers get their ports; a test may replace it.
var pickPorts = freePorts

// freePorts returns n distinct loopback ports of the rivals' band, apart
// from the ensembles' (see internal/freeport), that were free a moment ago.
func freePorts(n int) ([]int, error) {
	ports, err := freeport.Rivals.Take(n)
	if err != nil {
		return nil, fmt.Errorf("rivals: %w", err)
	}
	return ports, nil
}
