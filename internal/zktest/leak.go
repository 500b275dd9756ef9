package zktest

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// IgnoreEnsemble returns goleak options that ignore the goroutines a local
// ensemble keeps for the whole test binary: its process spawner and one
// reaper per JVM. Usage: goleak.VerifyNone(t, zktest.IgnoreEnsemble()...).
func IgnoreEnsemble() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/zklocks/zklocks/internal/ensemble.spawnLoop"),
		goleak.IgnoreAnyFunction("github.com/zklocks/zklocks/internal/ensemble.waitProcess"),
	}
}

// VerifyNoLeaks fails the test if goroutines that did not exist when it
// was called are still running after all of the test's cleanups (the
// closing of its Connect sessions included). Call it first in the test,
// before Connect: cleanups run last-registered first. It does not suit
// parallel tests, whose goroutines it can not tell apart.
func VerifyNoLeaks(t testing.TB, opts ...goleak.Option) {
	t.Helper()
	opts = append(append(opts, goleak.IgnoreCurrent()), IgnoreEnsemble()...)
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// VerifyNoLeaksWithin is VerifyNoLeaks for goroutines that are allowed
// to end a while after the test, such as go-zookeeper's Close of a
// connection that never had a session (it gives its close request a
// second): it looks again until within has passed.
func VerifyNoLeaksWithin(t testing.TB, within time.Duration, opts ...goleak.Option) {
	t.Helper()
	opts = append(append(opts, goleak.IgnoreCurrent()), IgnoreEnsemble()...)
	t.Cleanup(func() {
		deadline := time.Now().Add(within)
		for {
			err := goleak.Find(opts...)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("goroutines still running %v after the test: %v", within, err)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
