package history

import (
	"errors"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	ms := time.Millisecond
	hold := func(who string, enter, exit time.Duration, token int64) Hold {
		return Hold{Holder: who, Enter: enter, Exit: exit, Token: token}
	}
	reader := func(who string, enter, exit time.Duration, token int64) Hold {
		return Hold{Holder: who, Enter: enter, Exit: exit, Token: token, Shared: true}
	}
	for _, tc := range []struct {
		name string
		h    History
		want []error // nil: clean
	}{
		{"Empty", nil, nil},
		{"One", History{hold("a", 0, 5*ms, 1)}, nil},
		{"Clean", History{hold("a", 0, 5*ms, 10), hold("b", 6*ms, 9*ms, 11), hold("a", 10*ms, 12*ms, 40)}, nil},
		{"CleanOutOfOrder", History{hold("b", 6*ms, 9*ms, 11), hold("a", 0, 5*ms, 10)}, nil},
		{"Touching", History{hold("a", 0, 5*ms, 1), hold("b", 5*ms, 7*ms, 2)}, nil},
		{"Overlap", History{hold("a", 0, 5*ms, 1), hold("b", 4*ms, 7*ms, 2)}, []error{ErrOverlap}},
		{"Contained", History{hold("a", 0, 10*ms, 1), hold("b", 2*ms, 3*ms, 2), hold("c", 4*ms, 5*ms, 3)},
			[]error{ErrOverlap}},
		{"SameEnter", History{hold("a", 1*ms, 2*ms, 1), hold("b", 1*ms, 3*ms, 2)}, []error{ErrOverlap}},
		{"StillHeld", History{hold("a", 0, StillHeld, 1), hold("b", time.Hour, time.Hour+ms, 2)}, []error{ErrOverlap}},
		{"EqualTokens", History{hold("a", 0, 5*ms, 7), hold("b", 6*ms, 8*ms, 7)}, []error{ErrTokenOrder}},
		{"DecreasingTokens", History{hold("a", 0, 5*ms, 7), hold("b", 6*ms, 8*ms, 3)}, []error{ErrTokenOrder}},
		{"DecreasingOutOfOrder", History{hold("b", 6*ms, 8*ms, 3), hold("a", 0, 5*ms, 7)}, []error{ErrTokenOrder}},
		{"OverlapAndTokens", History{hold("a", 0, 5*ms, 2), hold("b", 1*ms, 6*ms, 1)}, []error{ErrOverlap, ErrTokenOrder}},
		{"Malformed", History{hold("a", 5*ms, 1*ms, 1)}, []error{ErrMalformed}},
		{"ReadersShare", History{reader("a", 0, 5*ms, 1), reader("b", 1*ms, 6*ms, 2)}, nil},
		{"ReadersEnterOutOfQueueOrder", History{hold("w", 0, 1*ms, 1), reader("a", 3*ms, 5*ms, 3), reader("b", 2*ms, 6*ms, 2)}, nil},
		{"WriterAfterReaders", History{reader("a", 0, 5*ms, 1), reader("b", 1*ms, 6*ms, 2), hold("w", 7*ms, 8*ms, 3)}, nil},
		{"WriterOverlapsReader", History{reader("a", 0, 5*ms, 1), hold("w", 4*ms, 8*ms, 2)}, []error{ErrOverlap}},
		{"ReaderOverlapsWriter", History{hold("w", 0, 5*ms, 1), reader("a", 4*ms, 8*ms, 2)}, []error{ErrOverlap}},
		{"ReaderTokenBelowWriter", History{hold("w", 0, 5*ms, 4), reader("a", 6*ms, 8*ms, 2)}, []error{ErrTokenOrder}},
		{"WriterTokenBelowAnEarlierReader", History{reader("a", 0, 5*ms, 5), reader("b", 1*ms, 6*ms, 2), hold("w", 7*ms, 8*ms, 4)}, []error{ErrTokenOrder}},
		{"WriterTokenBelowReader", History{reader("a", 0, 5*ms, 4), hold("w", 6*ms, 8*ms, 2)}, []error{ErrTokenOrder}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.h)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Check(%v) = %v, want nil", tc.h, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check(%v) = nil, want %v", tc.h, tc.want)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("Check(%v) = %v, want it to report %v", tc.h, err, w)
				}
			}
		})
	}
}

func TestCheckPermits(t *testing.T) {
	ms := time.Millisecond
	hold := func(who string, enter, exit time.Duration, token int64) Hold {
		return Hold{Holder: who, Enter: enter, Exit: exit, Token: token}
	}
	for _, tc := range []struct {
		name    string
		permits int
		h       History
		want    []error // nil: clean
	}{
		{"Empty", 2, nil, nil},
		{"TwoOfTwo", 2, History{hold("a", 0, 5*ms, 2), hold("b", 1*ms, 6*ms, 1)}, nil},
		{"ThreeOfTwo", 2, History{hold("a", 0, 5*ms, 1), hold("b", 1*ms, 6*ms, 2), hold("c", 4*ms, 7*ms, 3)},
			[]error{ErrTooMany}},
		{"ThirdEntersAsFirstExits", 2, History{hold("a", 0, 5*ms, 1), hold("b", 1*ms, 6*ms, 2), hold("c", 5*ms, 7*ms, 3)}, nil},
		{"SharedToken", 2, History{hold("a", 0, 5*ms, 4), hold("b", 6*ms, 7*ms, 4)}, []error{ErrTokenOrder}},
		{"NoTokens", 2, History{hold("a", 0, 5*ms, 0), hold("b", 1*ms, 6*ms, 0)}, nil},
		{"Malformed", 2, History{hold("a", 5*ms, 1*ms, 1)}, []error{ErrMalformed}},
		{"OnePermitIsCheck", 1, History{hold("a", 0, 5*ms, 1), hold("b", 4*ms, 7*ms, 2)}, []error{ErrOverlap}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPermits(tc.h, tc.permits)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckPermits(%v, %d) = %v, want nil", tc.h, tc.permits, err)
				}
				return
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("CheckPermits(%v, %d) = %v, want it to report %v", tc.h, tc.permits, err, w)
				}
			}
		})
	}
}

func TestCrowded(t *testing.T) {
	ms := time.Millisecond
	h := History{
		{Holder: "a", Enter: 0, Exit: 10 * ms},
		{Holder: "b", Enter: 1 * ms, Exit: 10 * ms},
		{Holder: "c", Enter: 2 * ms, Exit: 3 * ms},
		{Holder: "d", Enter: 10 * ms, Exit: 11 * ms},
	}
	for permits, want := range map[int]int{1: 2, 2: 1, 3: 0} {
		if got := Crowded(h, permits); got != want {
			t.Errorf("Crowded(h, %d) = %d, want %d", permits, got, want)
		}
	}
	if got := MostAtOnce(h); got != 3 {
		t.Errorf("MostAtOnce = %d, want 3", got)
	}
}

// The contained case must name both late holds, not only the first.
func TestCheckNamesEveryOverlap(t *testing.T) {
	ms := time.Millisecond
	h := History{{Holder: "a", Exit: 10 * ms, Token: 1}, {Holder: "b", Enter: 2 * ms, Exit: 3 * ms, Token: 2}, {Holder: "c", Enter: 4 * ms, Exit: 5 * ms, Token: 3}}
	err := Check(h)
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 2 {
		t.Fatalf("Check = %v, want exactly two overlaps (a-b, a-c)", err)
	}
}

func TestCheckCapsReport(t *testing.T) {
	h := make(History, 50)
	for i := range h {
		h[i] = Hold{Holder: "x", Enter: 0, Exit: time.Second, Token: int64(i + 1)}
	}
	err := Check(h)
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != maxReported+1 {
		t.Fatalf("Check of 50 fully overlapping holds listed %v problems, want %d and a summary", err, maxReported)
	}
}

func TestRecorder(t *testing.T) {
	r := NewRecorder()
	exitA := r.Enter("a", 1)
	if h := r.History(); len(h) != 1 || h[0].Exit != StillHeld {
		t.Fatalf("open hold recorded as %v", h)
	}
	exitA()
	exitA() // only the first exit counts
	exitB := r.Enter("b", 2)
	exitB()
	h := r.History()
	if len(h) != 2 || h[0].Holder != "a" || h[1].Holder != "b" {
		t.Fatalf("History() = %v", h)
	}
	if !(h[0].Enter <= h[0].Exit && h[0].Exit <= h[1].Enter && h[1].Enter <= h[1].Exit) {
		t.Fatalf("recorded times are not monotonic: %v", h)
	}
	if err := Check(h); err != nil {
		t.Fatal(err)
	}
}

// Overlaps counts a shared hold that begins inside an exclusive one, and
// an exclusive one inside a shared one, but not readers inside readers.
func TestOverlapsWithSharedHolds(t *testing.T) {
	ms := time.Millisecond
	r := func(enter, exit time.Duration) Hold { return Hold{Enter: enter, Exit: exit, Shared: true} }
	w := func(enter, exit time.Duration) Hold { return Hold{Enter: enter, Exit: exit} }
	for _, tc := range []struct {
		name string
		h    History
		want int
	}{
		{"ReadersOnly", History{r(0, 5*ms), r(1*ms, 6*ms), r(2*ms, 3*ms)}, 0},
		{"ReaderInsideWriter", History{w(0, 5*ms), r(1*ms, 2*ms)}, 1},
		{"WriterInsideReader", History{r(0, 5*ms), w(1*ms, 2*ms)}, 1},
		{"WriterAfterReaders", History{r(0, 5*ms), r(1*ms, 6*ms), w(6*ms, 7*ms), r(7*ms, 8*ms)}, 0},
		{"WritersOverlap", History{w(0, 5*ms), w(1*ms, 6*ms)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Overlaps(tc.h); got != tc.want {
				t.Errorf("Overlaps(%v) = %d, want %d", tc.h, got, tc.want)
			}
		})
	}
}
