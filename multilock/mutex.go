package multilock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockerr"
	"github.com/zklocks/zklocks/internal/zkpath"
	"github.com/zklocks/zklocks/sequential"
)

// Mutex holds several locks at once, as one: Lock returns once every lock
// of its set is held, Unlock releases them all. Its methods are safe for
// concurrent use; like the other locks it holds its set at most once at a
// time.
type Mutex struct {
	paths []string            // sorted: the order every client takes them in
	locks []*sequential.Mutex // locks[i] is the lock at paths[i]

	mu      sync.Mutex // guards the fields below; written by the Lock or Unlock under way
	busy    bool       // a Lock or Unlock is under way
	taken   int        // how many of locks, from the first, this Mutex holds
	holding bool       // the whole set is held
	done    <-chan struct{}
	stopW   func() // ends the watch that closes done
	lost    error  // why the last hold was lost
}

// New returns a Mutex for the locks at paths on session s, each a
// sequential lock (so any sequential.Mutex, Curator InterProcessMutex or
// kazoo Lock on one of the paths excludes it there). Order does not
// matter: New sorts the paths. It fails with zklocks.ErrNilSession, with
// zklocks.ErrBadPath when there is no path, a path is invalid or listed
// twice, and with the errors of sequential.New for opts, which are
// sequential's and go to every lock of the set. It sends nothing to
// ZooKeeper.
func New(s *zklocks.Session, paths []string, opts ...zklocks.Option) (*Mutex, error) {
	sorted := slices.Sorted(slices.Values(paths))
	fail := func(err error) (*Mutex, error) {
		return nil, lockerr.Wrap("multilock", "new", strings.Join(sorted, ","), err)
	}
	if s == nil {
		return fail(zklocks.ErrNilSession)
	}
	if len(sorted) == 0 {
		return fail(fmt.Errorf("%w: no paths", zklocks.ErrBadPath))
	}
	for i, p := range sorted {
		if err := zkpath.Validate(p); err != nil {
			return fail(fmt.Errorf("%w: %q: %v", zklocks.ErrBadPath, p, err))
		}
		if i > 0 && sorted[i-1] == p {
			// Two locks of one Mutex on one path would wait for each other.
			return fail(fmt.Errorf("%w: %s is listed twice", zklocks.ErrBadPath, p))
		}
	}
	m := &Mutex{paths: sorted, done: closed}
	for _, p := range sorted {
		l, err := sequential.New(s, p, opts...)
		if err != nil {
			return nil, fmt.Errorf("multilock: %w", err)
		}
		m.locks = append(m.locks, l)
	}
	return m, nil
}

// Paths returns the paths of the set in the order Lock takes them.
func (m *Mutex) Paths() []string { return slices.Clone(m.paths) }

// Lock takes every lock of the set in path order, waiting for each as
// long as it takes. It returns ctx's error when ctx ends first,
// zklocks.ErrLocked (TryLock) when one of them is taken,
// zklocks.ErrLockLost when a lock taken earlier is lost while Lock waits
// for a later one, and zklocks.ErrAlreadyLocked while the set is held or
// being taken. Whenever it fails it has released the locks it took
// before it returns, newest first: a failed Lock holds nothing.
func (m *Mutex) Lock(ctx context.Context) error { return m.fail("lock", m.acquire(ctx, true)) }

// TryLock is Lock that waits for none of the locks: the first one that is
// taken makes it release the others and fail with zklocks.ErrLocked.
func (m *Mutex) TryLock(ctx context.Context) error {
	return m.fail("trylock", m.acquire(ctx, false))
}

func (m *Mutex) acquire(ctx context.Context, wait bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	if m.busy || m.holding {
		m.mu.Unlock()
		return zklocks.ErrAlreadyLocked
	}
	m.busy = true
	m.mu.Unlock()

	err := m.lock(ctx, wait)

	m.mu.Lock()
	defer m.mu.Unlock()
	m.busy = false
	if err == nil {
		m.holding, m.lost = true, nil
		m.done, m.stopW = watchAny(m.held())
	}
	return err
}

// Unlock releases every lock of the set, the last taken first. It returns
// zklocks.ErrNotLocked when the set is not held, and zklocks.ErrLockLost
// (naming the paths) when one or more of the holds had been lost; every
// lock still held is released in either case.
func (m *Mutex) Unlock(ctx context.Context) error { return m.fail("unlock", m.unlock(ctx)) }

func (m *Mutex) unlock(ctx context.Context) error {
	m.mu.Lock()
	if m.busy || !m.holding {
		m.mu.Unlock()
		return zklocks.ErrNotLocked
	}
	m.busy = true
	stop := m.stopW
	m.mu.Unlock()

	stop()
	var errs []error
	for i := m.taken - 1; i >= 0; i-- {
		if err := m.locks[i].Unlock(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.paths[i], err))
		}
	}
	err := errors.Join(errs...)

	m.mu.Lock()
	defer m.mu.Unlock()
	m.busy, m.holding, m.taken, m.done = false, false, 0, closed
	if errors.Is(err, zklocks.ErrLockLost) {
		m.lost = err
	}
	return err
}

// Done returns a channel that is closed when the hold of the set ends: at
// Unlock, or as soon as any one of its locks is lost (see each lock's
// Done in package sequential). A closed channel when the set is not held.
func (m *Mutex) Done() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done
}

// Err returns why the set's hold was lost, wrapping zklocks.ErrLockLost
// and naming the path: the first lost lock's error while the set is held,
// then what the Unlock of a lost hold reported. nil while every lock
// holds, after a plain Unlock, and before the first hold.
func (m *Mutex) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.holding {
		return m.lost
	}
	for i := range m.taken {
		if err := m.locks[i].Err(); err != nil {
			return fmt.Errorf("%s: %w", m.paths[i], err)
		}
	}
	return m.lost
}

// Token returns the fencing token of the lock at path (its node's czxid)
// while the set is held, 0 otherwise or when path is not in the set. A
// set has one token per lock, not one for the set: each resource is
// fenced by the token of the lock that guards it.
func (m *Mutex) Token(path string) int64 {
	i, ok := slices.BinarySearch(m.paths, path)
	if !ok {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.holding {
		return 0
	}
	return m.locks[i].Token()
}

// Stats returns the requests and watch events of every lock of the set.
func (m *Mutex) Stats() zklocks.Stats {
	var s zklocks.Stats
	for _, l := range m.locks {
		ls := l.Stats()
		s.Requests += ls.Requests
		s.Notifications += ls.Notifications
	}
	return s
}

func (m *Mutex) fail(op string, err error) error {
	return lockerr.Wrap("multilock", op, strings.Join(m.paths, ","), err)
}

// held returns the Done channels of the locks taken so far.
func (m *Mutex) held() []<-chan struct{} {
	var chans []<-chan struct{}
	for _, l := range m.locks[:m.taken] {
		chans = append(chans, l.Done())
	}
	return chans
}

// take is one step of the recipe: Lock (or TryLock) of locks[i], cut
// short when a lock taken before it is lost.
func (m *Mutex) take(ctx context.Context, i int, wait bool) error {
	ctx, stop := whileHeld(ctx, m.held())
	defer stop()
	l, err := m.locks[i], error(nil)
	if wait {
		err = l.Lock(ctx)
	} else {
		err = l.TryLock(ctx)
	}
	if err != nil {
		return heldLost(ctx, err)
	}
	m.mu.Lock()
	m.taken = i + 1
	m.mu.Unlock()
	return nil
}

// giveBack releases the first n locks, the newest first. Its context is
// the caller's without the cancellation (that has often ended: it is why
// the step failed), bounded by giveBackBudget: a failed Lock returns
// about when its ctx ends, and each lock's Unlock leaves what it can not
// do by then to the background, where it goes on until it is done or the
// session ends.
func (m *Mutex) giveBack(ctx context.Context, n int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), giveBackBudget)
	defer cancel()
	for i := n - 1; i >= 0; i-- {
		_ = m.locks[i].Unlock(ctx) // a lost one reports it; there is nothing left to do
	}
	m.mu.Lock()
	m.taken = 0
	m.mu.Unlock()
}

// giveBackBudget bounds the rollback of a failed Lock.
const giveBackBudget = time.Second

// errHeldLost is the cause of the ctx whileHeld gives the wait for one
// lock when a lock taken before it is lost.
var errHeldLost = errors.New("a lock of the set taken before was lost")

// whileHeld returns ctx, also cancelled (cause errHeldLost) once any of
// chans closes, and the func that ends the watch.
func whileHeld(ctx context.Context, chans []<-chan struct{}) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	lost, stop := watchAny(chans)
	go func() {
		select {
		case <-lost:
			cancel(errHeldLost)
		case <-ctx.Done():
		}
	}()
	// cancel first: the stop that closes lost must not read as a loss.
	return ctx, func() { cancel(nil); stop() }
}

// heldLost turns the error of a step cut short by whileHeld into a loss.
func heldLost(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errHeldLost) {
		return fmt.Errorf("%w: %w, which ended this wait (%v)", zklocks.ErrLockLost, errHeldLost, err)
	}
	return err
}

// watchAny returns a channel closed as soon as any of chans closes or the
// watch is ended, and the func that ends the watch (and waits for it).
// Ending it closes the channel too: it is the set's Done, which Unlock
// must close for whoever took it during the hold. One goroutine watches
// them all.
func watchAny(chans []<-chan struct{}) (<-chan struct{}, func()) {
	fired, stop, exited := make(chan struct{}), make(chan struct{}), make(chan struct{})
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(stop)}}
	for _, c := range chans {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)})
	}
	go func() {
		defer close(exited)
		reflect.Select(cases)
		close(fired)
	}()
	var once sync.Once
	return fired, func() { once.Do(func() { close(stop) }); <-exited }
}

// closed is what Done returns when the set is not held.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
