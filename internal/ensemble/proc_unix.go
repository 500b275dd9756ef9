//go:build unix

package ensemble

import (
	"errors"
	"syscall"
)

// signalGroup sends sig to the process group led by pid (each member runs
// in its own group, so helper processes of the JVM get it too).
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Alive reports whether a process with this pid exists (zombies included).
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
