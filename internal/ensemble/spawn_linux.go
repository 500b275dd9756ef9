package ensemble

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// On Linux every JVM is started with the parent-death signal set to
// SIGKILL, so the kernel kills it when its parent goes away: after a panic,
// a t.Fatal that skips Close, a test timeout or a SIGKILL of the test
// binary. The kernel's "parent" for this purpose is the OS thread that
// forked the child, not the process: if the forking thread exits, the child
// is killed even though the Go program lives on. Go threads come and go
// (a thread whose goroutine ends while locked to it is destroyed), so all
// forks happen on one goroutine that locks its thread and never returns.

type spawnRequest struct {
	cmd  *exec.Cmd
	errc chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnRequest
)

// startProcess starts cmd in its own process group, tied to the life of
// this process. It blocks until the fork and exec are done.
func startProcess(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnRequest)
		go spawnLoop(spawnCh)
	})
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	req := spawnRequest{cmd: cmd, errc: make(chan error, 1)}
	spawnCh <- req
	return <-req.errc
}

// spawnLoop runs for the rest of the process on a thread of its own; see
// the comment at the top of this file.
func spawnLoop(reqs <-chan spawnRequest) {
	runtime.LockOSThread()
	for req := range reqs {
		req.errc <- req.cmd.Start()
	}
}
