package liveness_test

import (
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/zktest"
)

// The leader refreshes a session when it creates it, after the
// connection was made: on a connection made by zklocks.Connect (which
// zktest.Connect uses) the clock has a proven moment at once, no earlier
// than the call, and a first hold need not wait for the keeper's proof.
func TestBirthIsAProvenMoment(t *testing.T) {
	before := time.Now()
	conn := zktest.Connect(t)
	c := zktest.Clock(t, conn)
	proven := c.Proven()
	if proven.Before(before) {
		t.Fatalf("proven %v before the connection was made; want no earlier than the call", before.Sub(proven))
	}
	if !proven.Before(time.Now()) {
		t.Fatalf("proven %v in the future", time.Until(proven))
	}
	if !c.Fresh() {
		t.Errorf("a connection made %v ago is not fresh (loss at %v from now)", time.Since(before), time.Until(c.LossAt()))
	}
}
