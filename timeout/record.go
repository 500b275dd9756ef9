package timeout

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
)

// This file is the lease record (docs/04-timeout.md, "The lease record"):
// the text in a contender's node that both sides read, and our writes of
// it. It carries the premise of every case of the chapter's "Why a judge
// never evicts a live holder: the four cases": only a holder writes the "held" form, so the mtime of a
// node that says "held" is the ZooKeeper time of a write its holder sent
// while it held the lock, and a judge reads that write's version.

// LeaseRecord is the lease a contender declared in its node:
//
//	lease=<milliseconds>ms        while it waits in the queue
//	lease=<milliseconds>ms held   once it holds the lock and has written its record
//
// A node with any other data (empty, Curator's, kazoo's, a
// sequential.Mutex's) declares no lease and is never evicted.
type LeaseRecord struct {
	// Length is the lease the contender holds, or will hold, the lock
	// under.
	Length time.Duration
	// Held is true once the holder has written its record: the node's
	// mtime is then the ZooKeeper time of its last renewal, and the lease
	// runs out at mtime + Length by ZooKeeper's clock. A node without it
	// (a waiter's, or a holder's before its record lands) says nothing
	// about when its lease started.
	Held bool
}

const leaseKey, leaseUnit, heldMark = "lease=", "ms", "held"

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

// DecodeLease decodes the data of a contender's node, for example a
// sequential.Contender's Data, for tools that inspect a lock. ok is false
// when the data declares no lease (other variants, other libraries, a
// Mutex without WithLease).
func DecodeLease(data []byte) (rec LeaseRecord, ok bool) {
	f := strings.Fields(string(data))
	if len(f) == 0 || len(f) > 2 || len(f) == 2 && f[1] != heldMark {
		return LeaseRecord{}, false
	}
	v, key := strings.CutPrefix(f[0], leaseKey)
	v, unit := strings.CutSuffix(v, leaseUnit)
	ms, err := strconv.ParseInt(v, 10, 64)
	if !key || !unit || err != nil || ms <= 0 || ms > math.MaxInt64/int64(time.Millisecond) {
		return LeaseRecord{}, false
	}
	return LeaseRecord{Length: time.Duration(ms) * time.Millisecond, Held: len(f) == 2}, true
}

// ownNode is our node as we write it: the judge's probes while we wait,
// then the holder's record and renewals. Only we write it, so the version
// after our last write is the node's, unless a write's answer was lost:
// then the next write reads the version first, synced, because the member
// we talk to now may not have applied the lost write, and a stale version
// would fail the write with BadVersion, which reads as an eviction.
type ownNode struct {
	m     *Mutex
	path  string
	ver   int32
	known bool // ver is the node's version
	// mon is the hold's monitor once we hold: its SetData takes a
	// revocation request written between two renewals as a request.
	mon *hold.Monitor
}

// write sets our node's data at its version; kind names the write for
// countWrite.
func (o *ownNode) write(ctx context.Context, data []byte, kind leaseWrite) (*zk.Stat, error) {
	c := o.m.base.Client
	if !o.known {
		_, st, err := c.GetSynced(ctx, o.path)
		if err != nil {
			return nil, err
		}
		if sid := c.Conn.SessionID(); st.EphemeralOwner != sid {
			return nil, fmt.Errorf("%w: %s belongs to session %#x, ours is %#x", hold.ErrSessionExpired, o.path, st.EphemeralOwner, sid)
		}
		o.ver, o.known = st.Version, true
	}
	sent := func() { countWrite(o.m, kind) }
	var st *zk.Stat
	var err error
	if o.mon != nil {
		st, err = o.mon.SetData(ctx, data, o.ver, sent)
	} else {
		st, err = c.SetCounted(ctx, o.path, data, o.ver, sent)
	}
	if err != nil {
		o.known = false // it may or may not have been applied
		return nil, err
	}
	o.ver = st.Version
	return st, nil
}

// leaseWrite is a kind of write the lease logic sends.
type leaseWrite int

const (
	stampWrite   leaseWrite = iota // the holder's "held" record
	renewalWrite                   // the holder's renewals of it
	probeWrite                     // a judge's write of its own node, to learn ZooKeeper's time
	evictWrite                     // a judge's versioned delete of an expired head
	dropWrite                      // a holder's delete of its node after giving the hold up
)

// countWrite is called for each write the lease logic sends, as it goes
// out. It does nothing here: the tests count with it (export_test.go),
// to account for every quorum write the leader makes.
var countWrite = func(*Mutex, leaseWrite) {}
