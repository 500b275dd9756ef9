package rivals

import (
	"errors"
	"fmt"
	"os/exec"
)

// ErrNotInstalled means a rival server's program was not found. The
// error that wraps it names the program and says how to install it.
var ErrNotInstalled = errors.New("rivals: server not installed; run scripts/install-rivals.sh " +
	"(or make test, which runs it) to install Debian's redis-server, etcd-server and postgresql")

// ErrNotHeld is returned by Unlock when the caller does not hold the
// lock: it never took it, released it already, or lost it (its TTL,
// lease or session ran out and the server let it go).
var ErrNotHeld = errors.New("rivals: lock not held")

// ErrHeld is returned by Lock when the same Locker already holds the lock:
// none of the rival locks is re-entrant here.
var ErrHeld = errors.New("rivals: lock already held by this Locker")

// lookPath finds a server program, or says how to install it.
func lookPath(prog, pkg string) (string, error) {
	p, err := exec.LookPath(prog)
	if err != nil {
		return "", fmt.Errorf("%s not found (Debian package %s): %w", prog, pkg, ErrNotInstalled)
	}
	return p, nil
}
