package rivals

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// The frozen-holder test runs its first holder in a child process, this
// test binary run again (TestMain sends it to RunHolder), through
// StartHolder; holder.go says why a child. These wrappers fail the test
// instead of returning errors.

// holderProc is the test's handle on a holder process.
type holderProc struct{ *Holder }

// startHolder starts a holder of system on target; the test's cleanup
// kills it (frozen or not) and reaps it.
func startHolder(t *testing.T, system System, target, lock string, ttl time.Duration, store string) holderProc {
	t.Helper()
	h, err := StartHolder(exec.Command(os.Args[0], "-test.run=^$"),
		HolderConfig{System: system, Target: target, Lock: lock, TTL: ttl, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return holderProc{h}
}

// signal sends sig to the holder's process group.
func (h holderProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	var err error
	switch sig {
	case syscall.SIGSTOP:
		err = h.Freeze()
	case syscall.SIGCONT:
		err = h.Thaw()
	default:
		t.Fatalf("holder: no use for signal %v", sig)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// next waits for the holder's next line, which must be event want.
func (h holderProc) next(t *testing.T, want string, within time.Duration) HolderMsg {
	t.Helper()
	m, err := h.Next(context.Background(), want, within)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
