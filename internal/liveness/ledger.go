package liveness

import "time"

// gap is G of the package doc: how long after a request's answer a
// request through the leader must be sent to prove the first.
func gap(timeout time.Duration) time.Duration { return timeout / 4 }

// syncEvery is how long after the last request through the leader went
// out or was answered, whichever is later, the keeper sends a sync. Just
// over G/2 from answer to send: every sync then proves the one two
// before it, and the clock trails the present by G plus two round trips
// right after an answer, 3G/2 at most.
func syncEvery(timeout time.Duration) time.Duration { return timeout / 8 }

// exchange is one answered request that the ledger has not credited yet.
type exchange struct{ sent, answered time.Time }

// maxOpen bounds the exchanges kept for crediting; dropping one only
// credits less. Exchanges answered less than gap/spacing apart count as
// one, so maxOpen of them span two gaps, the most the rule needs.
const (
	maxOpen = 32
	spacing = 16
)

// ledger applies the package doc's rule to one session's requests.
type ledger struct {
	proven time.Time  // the latest proven refresh, zero if none
	open   []exchange // answered requests not credited yet
	leader time.Time  // the latest request through the leader went out or was answered
}

// answered records an answered request and reports whether the proven
// moment moved. A request through the leader (viaLeader) credits every
// open exchange answered at least g before it was sent.
func (l *ledger) answered(sent, answered time.Time, viaLeader bool, g time.Duration) bool {
	moved := false
	if viaLeader {
		l.sent(answered)
		credit := l.proven
		kept := l.open[:0]
		for _, e := range l.open {
			switch {
			case !e.answered.Add(g).After(sent):
				if e.sent.After(credit) {
					credit = e.sent
				}
			case e.sent.After(l.proven):
				kept = append(kept, e)
			}
		}
		l.open = kept
		moved = l.credit(credit)
	}
	if !sent.After(l.proven) {
		return moved
	}
	if n, ok := l.newest(); ok && answered.Sub(n.answered).Abs() < g/spacing {
		// A busy session answers many requests a moment apart: keep the
		// one already open, which a later request proves as soon as any
		// of them. Kept newest only, maxOpen of them would all be too
		// young to prove while requests stream in.
		return moved
	}
	if len(l.open) == maxOpen {
		oldest := 0
		for i, e := range l.open {
			if e.sent.Before(l.open[oldest].sent) {
				oldest = i
			}
		}
		l.open = append(l.open[:oldest], l.open[oldest+1:]...)
	}
	l.open = append(l.open, exchange{sent, answered})
	return moved
}

// sent notes a request through the leader going out or answered.
func (l *ledger) sent(at time.Time) {
	if at.After(l.leader) {
		l.leader = at
	}
}

// credit moves the proven moment on to at, if later, and drops the open
// exchanges it makes useless.
func (l *ledger) credit(at time.Time) bool {
	if !at.After(l.proven) {
		return false
	}
	l.proven = at
	kept := l.open[:0]
	for _, e := range l.open {
		if e.sent.After(at) {
			kept = append(kept, e)
		}
	}
	l.open = kept
	return true
}

// newest returns the open exchange sent last.
func (l *ledger) newest() (exchange, bool) {
	var n exchange
	for _, e := range l.open {
		if e.sent.After(n.sent) {
			n = e
		}
	}
	return n, !n.sent.IsZero()
}
