package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/zklocks/zklocks"
)

// Factory makes one contender's lock on path, on s (its own session).
type Factory func(s *zklocks.Session, path string) (zklocks.Locker, error)

// Variant is one lock the bench can run.
type Variant struct {
	// Name is the registry key, e.g. "sequential".
	Name string
	// New makes one contender's lock.
	New Factory
	// Describe is one line for tables and figures.
	Describe string
	// NodeAtPath is true for a lock whose node is the lock path itself
	// (naive); the others queue children under the lock path, which the
	// bench creates before the run so that no container node is reaped or
	// re-created while it runs.
	NodeAtPath bool
	// Context, when set, derives the context a contender passes to every
	// call (reentrant keys re-entry by an owner carried in the context).
	Context func(ctx context.Context, contender int) context.Context
	// Reenter, when set, is called while a contender holds the lock, to
	// take and release it once more from the same owner. The bench runs
	// it when Config.Reentries > 0.
	Reenter func(ctx context.Context, l zklocks.Locker) error
	// Reader, when set, makes the lock of the contenders Readers picks:
	// the read side of a read-write lock, whose holds may overlap each
	// other's (and no one else's). New makes the others'.
	Reader  Factory
	Readers func(contender int) bool
	// Permits, above one, makes the variant a semaphore: up to Permits
	// holds may be open at once, and the history is checked for that
	// (history.CheckPermits) instead of for mutual exclusion.
	Permits int
	// Locks, above zero, is how many locks one hold takes at once (a
	// multilock): New is then given a lock path under which it makes
	// them, and a driver is run with --multi Locks.
	Locks int
	// Election marks a leader election: a hold is a term (a driver is
	// run with --latch).
	Election bool
	// Driver, when set instead of New, makes the variant another
	// library's lock, run in a child process by a driver of bench/peers
	// (curator, kazoo). Its runs measure what the driver's lines and the
	// servers tell: the client-side counts stay zero (Result.External).
	Driver *Driver
}

// External reports whether the variant runs in a driver's process.
func (v Variant) External() bool { return v.Driver != nil }

var (
	registryMu sync.Mutex
	registry   = map[string]Variant{}
	// order is the progression in which tables and figures list variants.
	order = []string{"naive", "sequential", "reentrant-memory", "reentrant-node", "timeout", "zk-peer", "curator", "kazoo"}
)

// Register adds a variant. The variant packages are registered by this
// package itself (variants_*.go); Register is exported for experiments.
func Register(v Variant) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if v.Name == "" || (v.New == nil) == (v.Driver == nil) {
		panic("bench: Register needs a name and a factory or a driver")
	}
	registry[v.Name] = v
	if !slices.Contains(order, v.Name) {
		order = append(order, v.Name)
	}
}

// Lookup returns the variant registered under name.
func Lookup(name string) (Variant, error) {
	registryMu.Lock()
	defer registryMu.Unlock()
	v, ok := registry[name]
	if !ok {
		return Variant{}, fmt.Errorf("bench: unknown variant %q (have %v)", name, namesLocked(true))
	}
	return v, nil
}

// Names lists the registered variants that run in this process, in the
// order of the progression: the locks the Go benchmarks (BenchmarkLock)
// and the fault tests cover. The peers run by a driver in a child
// process (curator, kazoo) are left out; AllNames has them too.
func Names() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	return namesLocked(false)
}

// AllNames lists every registered variant, the driven peers included, in
// the order of the progression: zklocks bench's default.
func AllNames() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	return namesLocked(true)
}

func namesLocked(external bool) []string {
	var out []string
	for _, n := range order {
		if v, ok := registry[n]; ok && (external || !v.External()) {
			out = append(out, n)
		}
	}
	return out
}
