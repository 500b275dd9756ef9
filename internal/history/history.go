// Package history records the holds of a lock and checks them: no two
// exclusive holds overlap, fencing tokens grow, a semaphore never has more
// holders than permits. It imports no test support, so that the bench and
// the zklocks command can check their runs without linking the testing
// package (internal/locktest, the conformance suite, uses it too).
package history

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Problems Check reports, for errors.Is.
var (
	ErrOverlap    = errors.New("history: two holds overlap")
	ErrTokenOrder = errors.New("history: fencing token does not increase")
	ErrMalformed  = errors.New("history: malformed hold")
)

// StillHeld is the Exit of a hold whose end has not been recorded: it
// overlaps every hold that entered after it.
const StillHeld = time.Duration(math.MaxInt64)

// Hold is one recorded hold of a lock. Enter and Exit are readings of one
// monotonic clock (offsets from the Recorder's start). Enter is taken after
// Lock returned and Exit before Unlock was called, so the recorded interval
// lies inside the real one: if two recorded intervals overlap, the real
// holds did too.
//
// Shared marks a reader's hold of a read-write lock: shared holds may
// overlap each other, and nothing else.
type Hold struct {
	Holder string
	Enter  time.Duration
	Exit   time.Duration
	Token  int64
	Shared bool
}

func (h Hold) String() string {
	exit := "still held"
	if h.Exit != StillHeld {
		exit = h.Exit.String()
	}
	kind := ""
	if h.Shared {
		kind = " (shared)"
	}
	return fmt.Sprintf("%s%s [%v, %s) token %d", h.Holder, kind, h.Enter, exit, h.Token)
}

// History is a set of holds of one lock path, in any order.
type History []Hold

// Recorder collects the holds of one lock path from any number of
// goroutines. Its zero value is not usable; use NewRecorder.
type Recorder struct {
	start time.Time // carries a monotonic reading

	mu    sync.Mutex
	holds History
}

// NewRecorder returns a Recorder whose clock starts now.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Enter records that holder has just acquired the lock with the given
// fencing token. Call it right after Lock returns; call the returned exit
// function right before Unlock. Calling exit more than once records only
// the first call.
func (r *Recorder) Enter(holder string, token int64) (exit func()) {
	return r.enter(holder, token, false)
}

// EnterShared is Enter for a reader's hold of a read-write lock.
func (r *Recorder) EnterShared(holder string, token int64) (exit func()) {
	return r.enter(holder, token, true)
}

func (r *Recorder) enter(holder string, token int64, shared bool) (exit func()) {
	enter := time.Since(r.start) // monotonic: time.Since ignores wall-clock jumps
	r.mu.Lock()
	i := len(r.holds)
	r.holds = append(r.holds, Hold{Holder: holder, Enter: enter, Exit: StillHeld, Token: token, Shared: shared})
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			exit := time.Since(r.start)
			r.mu.Lock()
			r.holds[i].Exit = exit
			r.mu.Unlock()
		})
	}
}

// History returns a copy of the holds recorded so far, in the order they
// were entered. Holds whose exit is not recorded yet end at StillHeld.
func (r *Recorder) History() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.holds)
}

// Overlaps counts the holds that began while another was still held: the
// number of double holders in h (Check names them; this counts them, also
// for histories whose holders have no tokens to compare).
func Overlaps(h History) int {
	s := slices.Clone(h)
	slices.SortFunc(s, func(a, b Hold) int { return cmp.Compare(a.Enter, b.Enter) })
	n := 0
	var until, untilExclusive time.Duration // the latest exit of any hold, of any exclusive hold
	for i, x := range s {
		if i > 0 && (x.Enter < untilExclusive || !x.Shared && x.Enter < until) {
			n++
		}
		until = max(until, x.Exit)
		if !x.Shared {
			untilExclusive = max(untilExclusive, x.Exit)
		}
	}
	return n
}

// conflict reports whether two holds may not overlap: unless both are
// shared.
func conflict(a, b Hold) bool { return !a.Shared || !b.Shared }

// maxReported bounds the problems Check lists one by one.
const maxReported = 10

// Check reports every pair of holds that overlap (wrapping ErrOverlap),
// unless both are shared, and every hold whose token is not larger than
// every token entered before it (wrapping ErrTokenOrder); for a shared
// hold, every token of an exclusive hold entered before it (readers that
// share the lock enter out of their queue order). Intervals are half-open: a hold
// may enter at the very instant the previous one exits. It returns nil for a
// clean history, including an empty one.
func Check(h History) error {
	var problems []error
	report := func(err error) {
		problems = append(problems, err)
	}
	for _, x := range h {
		if x.Exit < x.Enter {
			report(fmt.Errorf("%w: %v exits before it enters", ErrMalformed, x))
		}
	}
	sorted := slices.Clone(h)
	slices.SortStableFunc(sorted, func(a, b Hold) int {
		if a.Enter != b.Enter {
			return cmp.Compare(a.Enter, b.Enter)
		}
		return cmp.Compare(a.Exit, b.Exit)
	})

	// Sweep in enter order. Every hold still open when x enters overlaps x;
	// keeping them in a list (not only the longest) names every pair.
	var open []Hold
	var before, beforeExclusive *Hold // the largest token entered so far, of any hold and of exclusive ones
	for i, x := range sorted {
		open = slices.DeleteFunc(open, func(o Hold) bool { return o.Exit <= x.Enter })
		for _, o := range open {
			if conflict(o, x) {
				report(fmt.Errorf("%w: %v and %v", ErrOverlap, o, x))
			}
		}
		open = append(open, x)
		// An exclusive hold must come after every hold entered before it
		// in the queue, a shared one after every exclusive one.
		if top := before; !x.Shared && top != nil && x.Token <= top.Token {
			report(fmt.Errorf("%w: %v follows %v", ErrTokenOrder, x, *top))
		} else if top := beforeExclusive; x.Shared && top != nil && x.Token <= top.Token {
			report(fmt.Errorf("%w: %v follows %v", ErrTokenOrder, x, *top))
		}
		if before == nil || x.Token > before.Token {
			before = &sorted[i]
		}
		if !x.Shared && (beforeExclusive == nil || x.Token > beforeExclusive.Token) {
			beforeExclusive = &sorted[i]
		}
	}

	if len(problems) > maxReported {
		more := len(problems) - maxReported
		problems = append(problems[:maxReported:maxReported], fmt.Errorf("... and %d more", more))
	}
	return errors.Join(problems...)
}

// ErrTooMany is CheckPermits's problem: more holders at once than permits.
var ErrTooMany = errors.New("history: more holders at once than permits")

// CheckPermits is Check for a semaphore of permits permits: at no instant
// are more than permits holds open (wrapping ErrTooMany, naming the holds
// open then), and no two holds carry the same non-zero token (holds that
// overlap enter in any order, so tokens are not compared for order). With
// one permit it is Check.
func CheckPermits(h History, permits int) error {
	if permits <= 1 {
		return Check(h)
	}
	var problems []error
	sorted := slices.Clone(h)
	slices.SortStableFunc(sorted, func(a, b Hold) int { return cmp.Compare(a.Enter, b.Enter) })
	var open []Hold
	seen := map[int64]Hold{}
	for _, x := range sorted {
		if x.Exit < x.Enter {
			problems = append(problems, fmt.Errorf("%w: %v exits before it enters", ErrMalformed, x))
		}
		if y, dup := seen[x.Token]; dup && x.Token != 0 {
			problems = append(problems, fmt.Errorf("%w: %v and %v share a token", ErrTokenOrder, y, x))
		}
		seen[x.Token] = x
		open = append(slices.DeleteFunc(open, func(o Hold) bool { return o.Exit <= x.Enter }), x)
		if len(open) > permits {
			problems = append(problems, fmt.Errorf("%w: %d holds open at %v: %v", ErrTooMany, len(open), x.Enter, open))
		}
	}
	if len(problems) > maxReported {
		more := len(problems) - maxReported
		problems = append(problems[:maxReported:maxReported], fmt.Errorf("... and %d more", more))
	}
	return errors.Join(problems...)
}

// Crowded counts the holds that entered while permits others were still
// open: for one permit, the double holders Overlaps counts (shared holds
// aside); for a semaphore, the holders past its bound.
func Crowded(h History, permits int) int {
	s := slices.Clone(h)
	slices.SortFunc(s, func(a, b Hold) int { return cmp.Compare(a.Enter, b.Enter) })
	n := 0
	var open []Hold
	for _, x := range s {
		open = append(slices.DeleteFunc(open, func(o Hold) bool { return o.Exit <= x.Enter }), x)
		if len(open) > max(permits, 1) {
			n++
		}
	}
	return n
}

// MostAtOnce is the largest number of holds open at one instant: a
// semaphore's history that never reached its permits has not tested its
// bound.
func MostAtOnce(h History) int {
	s := slices.Clone(h)
	slices.SortFunc(s, func(a, b Hold) int { return cmp.Compare(a.Enter, b.Enter) })
	most := 0
	var open []Hold
	for _, x := range s {
		open = append(slices.DeleteFunc(open, func(o Hold) bool { return o.Exit <= x.Enter }), x)
		most = max(most, len(open))
	}
	return most
}
