package lockq

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// The queue's names: how contenders' nodes are named, how their sequence
// numbers are read, and the order they are in.

// Node names. ZooKeeper appends the sequence number to what we ask for, so
// a contender's node is called ProtectedPrefix + guid + separator +
// sequence. The separator is the variant's: the mutexes' is LockSep, as
// Curator's and go-zookeeper's (the read-write lock and the election name
// their own, after Curator's). Every separator starts with '-', which no
// GUID of ours contains. Curator orders a queue by what follows its own
// separator in each name, so a node it is to order rightly must carry it.
const (
	ProtectedPrefix = "_c_"
	LockSep         = "-lock-"
	seqWidth        = 10 // ZooKeeper prints the counter with %010d
)

// Entry is one contender in the queue: a child of the lock path whose name
// ends in a sequence number.
type Entry struct {
	Name string
	Seq  int32
}

// ParseSeq returns the sequence number ZooKeeper appended to a child's
// name, whatever the prefix before it (ours and Curator's "-lock-",
// kazoo's "__lock__", go-zookeeper's "lock-"). A name without such a
// suffix is not a contender.
//
// ZooKeeper's counter is a signed 32-bit int printed with %010d, so after
// 2^31-1 creates under one parent it wraps to negative numbers, and the
// sign takes one of the ten places: -5 prints as "-000000005", while
// -1000000000 down to -2147483648 take eleven characters. In that last
// range a '-' before the ten digits is a minus sign only if the prefix
// does not end with it; every lock prefix in use ends with '-' or '_', so
// a '-' that follows one of those is the sign.
func ParseSeq(name string) (int32, bool) {
	n := len(name)
	if n < seqWidth {
		return 0, false
	}
	tail := name[n-seqWidth:]
	neg := tail[0] == '-'
	if neg {
		tail = tail[1:] // "-" and nine digits
	}
	var v int64
	for i := 0; i < len(tail); i++ {
		c := tail[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		if v == 0 {
			return 0, false // %010d never prints "-000000000"
		}
		return int32(-v), true
	}
	if n > seqWidth+1 && name[n-seqWidth-1] == '-' && (name[n-seqWidth-2] == '-' || name[n-seqWidth-2] == '_') {
		if v < 1e9 || v > -math.MinInt32 {
			return 0, false // would have been printed in ten characters, or out of range
		}
		return int32(-v), true
	}
	if v > math.MaxInt32 {
		return 0, false
	}
	return int32(v), true
}

// Sort keeps the children that are contenders and orders them as
// ZooKeeper created them: the first one holds the lock.
//
// The order is serial-number arithmetic on the 32-bit counter (RFC 1982,
// the fix proposed in kazoo #606), not a plain comparison: each sequence
// is taken as its signed 32-bit distance from one member of the queue.
// That order is exact as long as the oldest and the newest live contender
// are fewer than 2^31 creates apart, so it stays right when the counter
// wraps from 2147483647 to -2147483648, where a plain signed comparison
// (go-zookeeper's Lock) or a string comparison (Curator, kazoo) would put
// the newest nodes first. Ties, which ZooKeeper never produces under one
// parent, are broken by name so every client sees the same order.
func Sort(children []string) []Entry {
	q := make([]Entry, 0, len(children))
	for _, name := range children {
		if s, ok := ParseSeq(name); ok {
			q = append(q, Entry{Name: name, Seq: s})
		}
	}
	if len(q) < 2 {
		return q
	}
	ref := q[0].Seq
	slices.SortFunc(q, func(a, b Entry) int {
		// int32 subtraction wraps around in Go: this is the serial distance.
		if c := cmp.Compare(a.Seq-ref, b.Seq-ref); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return q
}

// NamedFor reports whether name is the node of the acquisition with this
// GUID, whatever the variant's separator.
func NamedFor(name, guid string) bool { return strings.HasPrefix(name, ProtectedPrefix+guid+"-") }
