//go:build unix

package faulttest

import "syscall"

// The holder gets a process group of its own: if the test dies while the
// holder is stopped, the group is orphaned and the kernel sends it SIGHUP
// and SIGCONT, which ends it.
func childSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
