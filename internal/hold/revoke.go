package hold

import (
	"bytes"
	"sync"
)

// RevokeRequest is the data a client writes into a holder's node to ask
// it to give the lock up: the bytes Curator's Revoker writes too
// (LockInternals.REVOKE_MESSAGE in Curator 5.4), so that either library
// can ask the other's revocable holders.
var RevokeRequest = []byte("__REVOKE__")

// IsRevokeRequest reports whether a node's data asks its holder to give
// the lock up.
func IsRevokeRequest(data []byte) bool { return bytes.Equal(data, RevokeRequest) }

// revocation is closed once someone asks the hold to give up the lock.
type revocation struct {
	once sync.Once
	ch   chan struct{}
}

func newRevocation() *revocation { return &revocation{ch: make(chan struct{})} }

// seen closes the channel when data is a request.
func (r *revocation) seen(data []byte) {
	if IsRevokeRequest(data) {
		r.once.Do(func() { close(r.ch) })
	}
}

// Revoked is closed when a client has asked this hold to give the lock
// up, by writing RevokeRequest into its node; the monitor sees it through
// the data watch it keeps anyway. Asking ends nothing: the holder decides
// when to Unlock, and Done still closes only when the hold ends.
func (m *Monitor) Revoked() <-chan struct{} { return m.revoked.ch }
