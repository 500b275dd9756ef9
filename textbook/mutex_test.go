package textbook_test

import (
	"testing"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/textbook"
)

var _ zklocks.Locker = (*textbook.Mutex)(nil)

// TestConformance runs the suite against the textbook lock. Every case it
// fails is listed here, with what goes wrong, and must fail; every other
// case must pass. docs/hardening.md has a row for each, with the code of
// this module that fixes it and the test that pins the fix.
func TestConformance(t *testing.T) {
	locktest.Run(t, locktest.Variant{
		Name: "textbook",
		New: func(s *zklocks.Session, path string, opts ...zklocks.Option) (zklocks.Locker, error) {
			return textbook.New(s, path, opts...)
		},
		FIFO:   true,
		Layout: locktest.ChildrenOfPath,
		Expected: map[string]string{
			"BadInput": "New accepts every path and every option: it checks nothing before its first create",
			"CrashRelease/SessionExpired": "a holder cut off until its session expired never sees Done close: " +
				"no event reaches it while cut off, and the one it gets back is EventNotWatching, not a deletion",
			"DoneOnLoss/NodeDeleted": "Unlock after the node was deleted returns go-zookeeper's ErrNoNode, not ErrLockLost",
			"DoneOnLoss/SessionExpired": "Done stays open after the session expired: the watch ends with EventNotWatching, " +
				"which it does not take for a loss, and nothing times the session",
			"WaiterLoss": "a waiter whose session expired reads a listing without its node as \"none below mine\", " +
				"and fails with ErrNoNode instead of ErrLockLost wrapping ErrSessionExpired",
			"NoGoroutineLeak/AfterLoss": "Unlock after a loss returns ErrNoNode, not ErrLockLost",
			"OperationLog":              "no operation log: WithLogger is ignored",
			"ErrorShape":                "its errors name neither the package, the operation nor the lock path, and a loss is not ErrLockLost",
			"DoneBeforeItsLog":          "no loss is ever logged",
			"Revoke": "its nodes pass for a mutex's queue, so Revoke writes a request into the holder's node that the holder " +
				"never reads, and the write spends the holder's one watch",
		},
	})
}
