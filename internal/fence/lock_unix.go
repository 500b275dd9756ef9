//go:build unix

package fence

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f, shared by every process
// that opens the same store.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
