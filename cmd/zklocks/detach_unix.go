//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// detach puts cmd in a session of its own, so that closing the terminal
// or a Ctrl-C meant for the caller does not reach the background ensemble.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// keepToSelf marks an inherited descriptor close-on-exec, so that the
// JVMs this process starts do not inherit it too.
func keepToSelf(f *os.File) {
	syscall.CloseOnExec(int(f.Fd()))
}
