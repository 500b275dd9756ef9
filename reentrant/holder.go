package reentrant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ownerKey is the context key of the owner identity.
type ownerKey struct{}

// WithOwner returns a copy of ctx that carries owner as the identity that
// Lock, TryLock and Unlock act for. Calls with the same owner re-enter a
// hold; calls with another owner queue behind it. The owner plays the part
// a thread plays in Java's re-entrant locks: give every goroutine, request
// or job that must exclude the others its own owner, and pass the same one
// down into nested calls that may lock again.
//
// An empty owner is no owner: OwnerFrom reports false and the lock calls
// fail with ErrNoOwner.
func WithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

// OwnerFrom returns the owner carried by ctx, and whether there is one.
func OwnerFrom(ctx context.Context) (string, bool) {
	owner, _ := ctx.Value(ownerKey{}).(string)
	return owner, owner != ""
}

// Holder is what a reentrant lock writes into its node: who is waiting for
// or holding the lock. It is stored as one JSON object, for example
//
//	{"host":"web-3","pid":4711,"owner":"job-42","mode":"node","count":2}
//
// Host is os.Hostname (empty if unknown) and PID os.Getpid of the process;
// Owner is the owner from the context (WithOwner). Mode is the Mutex's
// CountMode ("memory" or "node"). Count is present in "node" mode only: the
// hold's current re-entry depth (1 from the create on). In "memory" mode
// the count lives in the holder's process and the field is left out, so
// that nobody reads a stale number.
type Holder struct {
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	Owner string `json:"owner"`
	Mode  string `json:"mode"`
	Count int    `json:"count,omitempty"`
}

// ParseHolder decodes a lock node's data, for example a
// sequential.Contender's Data, into a Holder. It fails when the data is not
// a JSON object with a non-empty owner, which is the case for nodes of other
// lock variants or other libraries on the same path.
func ParseHolder(data []byte) (Holder, error) {
	var h Holder
	if err := json.Unmarshal(data, &h); err != nil {
		return Holder{}, fmt.Errorf("reentrant: node data is not a holder record: %w", err)
	}
	if h.Owner == "" {
		return Holder{}, errors.New("reentrant: node data is not a holder record: no owner")
	}
	return h, nil
}

// encode returns h as node data.
func (h Holder) encode() []byte {
	b, err := json.Marshal(h)
	if err != nil { // a struct of strings and ints always marshals
		panic(err)
	}
	return b
}
