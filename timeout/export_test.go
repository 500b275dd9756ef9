package timeout

// Test seams, visible to this package's tests only.

// WithClock replaces the local clock of the lease logic.
var WithClock = withClock

// PauseRenewal stops m's renewals (and its own check of its lease) until
// resume is called: a holder whose renewer stalls while its session lives.
func (m *Mutex) PauseRenewal() (resume func()) { return m.pauseRenewal() }

// EvictionAttempts counts the eviction deletes m sent, successful or not.
func (m *Mutex) EvictionAttempts() int64 { return m.evictTries.Load() }

var (
	EncodeLease = encodeLease
	ParseLease  = parseLease
)
