package timeout

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// This file is the lease record: the text a contender's node carries,
// which both sides of the lease read. The package doc's "The lease
// record" tells why "held" marks the holder's own writes.

// The lease record. A contender's node carries its lease as ASCII text:
//
//	lease=<milliseconds>ms        while it waits in the queue
//	lease=<milliseconds>ms held   from the holder's first stamp on
//
// The "held" form is written only by the holder, so the mtime of a node
// that says "held" is the ZooKeeper time of a renewal made while it held
// the lock. A node with any other data (empty, Curator's, kazoo's, a
// sequential.Mutex's) declares no lease and is never evicted.
const (
	leaseKey  = "lease="
	leaseUnit = "ms"
	heldMark  = "held"
)

// encodeLease returns the node data for a lease of d, nil for no lease.
func encodeLease(d time.Duration, held bool) []byte {
	if d <= 0 {
		return nil
	}
	s := leaseKey + strconv.FormatInt(d.Milliseconds(), 10) + leaseUnit
	if held {
		s += " " + heldMark
	}
	return []byte(s)
}

// parseLease reads node data written by encodeLease. ok is false for data
// that declares no lease.
func parseLease(data []byte) (lease time.Duration, held, ok bool) {
	f := strings.Fields(string(data))
	if len(f) < 1 || len(f) > 2 {
		return 0, false, false
	}
	v, found := strings.CutPrefix(f[0], leaseKey)
	if !found {
		return 0, false, false
	}
	if v, found = strings.CutSuffix(v, leaseUnit); !found {
		return 0, false, false
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 || ms > math.MaxInt64/int64(time.Millisecond) {
		return 0, false, false
	}
	if len(f) == 2 {
		if f[1] != heldMark {
			return 0, false, false
		}
		held = true
	}
	return time.Duration(ms) * time.Millisecond, held, true
}
