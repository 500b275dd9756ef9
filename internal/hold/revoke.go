package hold

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
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

// maxRequestsInAWrite bounds how many revocation requests one SetData
// writes over: Revoke never asks a node that already carries a request,
// so more than a few in a row is not a client asking.
const maxRequestsInAWrite = 3

// SetData writes our node's data at version, for the locks that keep
// state in their node (the timeout lock's lease record, the re-entrant
// lock's count). A revocation request written in between fails that
// write with BadVersion; it is a request, not a loss: the hold is marked
// asked (Revoked), even if the watch's read comes too late to see the
// request, and the write goes on at the request's version. Any other
// write by someone else is returned as the BadVersion it is.
func (m *Monitor) SetData(ctx context.Context, data []byte, version int32, sent func()) (*zk.Stat, error) {
	for range maxRequestsInAWrite {
		st, err := m.c.SetCounted(ctx, m.path, data, version, sent)
		if !errors.Is(err, zk.ErrBadVersion) {
			return st, err
		}
		// Our member answered after it applied the write that moved the
		// version, so a plain read sees it.
		got, now, rerr := m.c.Get(ctx, m.path)
		if rerr != nil || now.Czxid != m.czxid || !IsRevokeRequest(got) {
			return nil, err
		}
		m.revoked.seen(got)
		version = now.Version
	}
	return nil, fmt.Errorf("%w: revocation requests written over %d times in a row", zk.ErrBadVersion, maxRequestsInAWrite)
}
