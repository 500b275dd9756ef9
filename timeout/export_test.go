package timeout

// Test seams, visible to this package's tests only.

// WithClock replaces the local clock of the lease logic.
var WithClock = withClock

// PauseRenewal stops m's renewals (and its own check of its lease) until
// resume is called: a holder whose renewer stalls while its session lives.
func (m *Mutex) PauseRenewal() (resume func()) { return m.gate.pause() }

// EvictionAttempts counts the eviction deletes m sent, successful or not.
func (m *Mutex) EvictionAttempts() int64 { return m.evictTries.Load() }

// LeaseWrites counts the writes m's lease logic has sent, by kind.
type LeaseWrites struct {
	Stamps, Renewals, Probes, Evictions, Drops int64
}

// Total is the number of writes.
func (w LeaseWrites) Total() int64 {
	return w.Stamps + w.Renewals + w.Probes + w.Evictions + w.Drops
}

// Sub returns w - o, kind by kind.
func (w LeaseWrites) Sub(o LeaseWrites) LeaseWrites {
	return LeaseWrites{w.Stamps - o.Stamps, w.Renewals - o.Renewals, w.Probes - o.Probes,
		w.Evictions - o.Evictions, w.Drops - o.Drops}
}

// Add returns w + o, kind by kind.
func (w LeaseWrites) Add(o LeaseWrites) LeaseWrites {
	return LeaseWrites{w.Stamps + o.Stamps, w.Renewals + o.Renewals, w.Probes + o.Probes,
		w.Evictions + o.Evictions, w.Drops + o.Drops}
}

// Writes returns what m's lease logic has sent so far.
func (m *Mutex) Writes() LeaseWrites {
	return LeaseWrites{m.stamps.Load(), m.renewals.Load(), m.probes.Load(), m.evictTries.Load(), m.drops.Load()}
}

var (
	EncodeLease = encodeLease
	ParseLease  = parseLease
)

// QueueDone is the Done of the sequential hold underneath m's current
// hold (a closed channel when there is none): the monitor of its node.
func (m *Mutex) QueueDone() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		return closed
	}
	return m.cur.node.Monitor().Done()
}
