//go:build unix && !linux

package ensemble

import (
	"os/exec"
	"syscall"
)

// startProcess starts cmd in its own process group. Outside Linux there is
// no parent-death signal: a JVM outlives a test binary that is killed
// before it can call Close (Close itself, and TestMain via zktest.Main,
// still kill every member).
func startProcess(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}
