package timeout

import "time"

// LeaseRecord is the lease a contender declared in its node, as
// DecodeLease reads it.
type LeaseRecord struct {
	// Length is the lease the contender holds, or will hold, the lock
	// under.
	Length time.Duration
	// Held is true once the holder has stamped the node: its mtime is then
	// the ZooKeeper time of the last renewal, and the lease runs out at
	// mtime + Length by ZooKeeper's clock. A node not yet stamped (a
	// waiter's, or a holder's in the instant before its first stamp) says
	// nothing about when its lease started.
	Held bool
}

// DecodeLease decodes the data of a contender's node, for example a
// sequential.Contender's Data, for tools that inspect a lock. ok is false
// when the data declares no lease (other variants, other libraries, a
// Mutex without WithLease).
func DecodeLease(data []byte) (rec LeaseRecord, ok bool) {
	d, held, ok := parseLease(data)
	return LeaseRecord{Length: d, Held: held}, ok
}
