package main

import (
	"regexp"
	"unicode"
	"unicode/utf8"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/timeout"
)

// Node names tell lock libraries apart only in part, so the kind of a
// contender is read from its name first and from its data second:
//
//	_c_<32 hex>-lock-<seq>             zklocks' sequential queue, which the
//	                                   reentrant and timeout locks share
//	                                   (their data tells them apart); also
//	                                   go-zookeeper's zk.Lock, which names
//	                                   its nodes the same way
//	_c_<32 hex>-latch-<seq>            zklocks' election
//	_c_<uuid with dashes>-lock-<seq>   Curator's InterProcessMutex
//	<32 hex>__lock__<seq>              kazoo's Lock
//
// Anything else with a sequence suffix is "unknown".
var (
	zklocksName = regexp.MustCompile(`^_c_[0-9a-f]{32}-(?:lock|latch)--?[0-9]+$`)
	curatorName = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock--?[0-9]+$`)
	kazooName   = regexp.MustCompile(`^[0-9a-f]{32}__lock__-?[0-9]+$`)
)

// classify fills in a contender's kind and its decoded data: a reentrant
// holder record, a timeout lease (judged against now, the ensemble clock,
// when there is one) or printable text.
func classify(c *contenderView, name string, data []byte, naive bool, now *int64) {
	c.DataBytes = len(data)
	if printable(data) {
		c.Data = ptrTo(string(data))
	}
	c.RevokeRequested = hold.IsRevokeRequest(data)
	switch {
	case naive:
		c.Kind = kindNaive
	case curatorName.MatchString(name):
		c.Kind = kindCurator
	case kazooName.MatchString(name):
		c.Kind = kindKazoo
	case zklocksName.MatchString(name):
		c.Kind = kindSequential
		if h, err := reentrant.ParseHolder(data); err == nil {
			c.Kind, c.Owner = kindReentrant, ownerOf(h)
		} else if rec, ok := timeout.DecodeLease(data); ok {
			c.Kind, c.Lease = kindTimeout, leaseOf(rec, c.MtimeMs, now)
		}
	default:
		c.Kind = kindUnknown
	}
}

func ownerOf(h reentrant.Holder) *owner {
	o := &owner{Owner: h.Owner, Host: h.Host, PID: h.PID, Mode: h.Mode}
	if h.Mode == reentrant.InNode.String() {
		o.Count = ptrTo(h.Count)
	}
	return o
}

// leaseOf judges a lease the way a waiting timeout.Mutex does: a stamped
// lease runs out at mtime + length by the ensemble's clock, and a waiter
// may evict its holder from then on.
func leaseOf(rec timeout.LeaseRecord, mtime int64, now *int64) *lease {
	l := &lease{Ms: rec.Length.Milliseconds(), Held: rec.Held}
	if rec.Held && now != nil {
		left := mtime + l.Ms - *now
		l.RemainingMs, l.Expired = ptrTo(left), ptrTo(left <= 0)
	}
	return l
}

// printable reports whether data is UTF-8 text without control
// characters (empty included), safe to print on a terminal as it is.
func printable(data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	for _, r := range string(data) {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
