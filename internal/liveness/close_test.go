package liveness_test

import (
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/zktest"
)

// Close ends the epoch and then waits for every hold that joined it to
// leave (its Done closed): only then may the connection close and the
// servers hand the locks over. A hold that has not left keeps Close
// waiting; its Leave lets Close return.
func TestCloseWaitsForTheHoldsOfTheEpoch(t *testing.T) {
	conn := zktest.Connect(t)
	c := zktest.Clock(t, conn)
	ep := c.Epoch()
	if err := ep.Join(); err != nil {
		t.Fatalf("Join of a live epoch: %v", err)
	}
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	select {
	case <-ep.Over():
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the epoch")
	}
	if err := ep.Join(); err == nil {
		t.Error("Join of an ended epoch succeeded; want its reason")
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a hold of the epoch had not left")
	case <-time.After(200 * time.Millisecond):
	}
	ep.Leave()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close still waiting after the last hold left")
	}
}
