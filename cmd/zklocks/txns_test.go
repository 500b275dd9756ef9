package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// zklocks txns end to end: a short run of multilock on a local ensemble,
// its leader's log decoded by TxnLogToolkit, every write a queue node's
// create or delete on the run's two lock paths.
func TestTxnsCountsTheLeadersLog(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ZooKeeper; run without -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errs bytes.Buffer
	if err := runTxns(ctx, []string{"-variants", "multilock-2", "-n", "2", "-duration", "500ms"}, &out, &errs); err != nil {
		t.Fatalf("%v; stderr: %s", err, errs.String())
	}
	for _, want := range []string{"| multilock-2 | 2 |", "| `create <lock>/l0/<id>-lock-<seq>` |", "| `delete <lock>/l1/<id>-lock-<seq>` |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// Proposals counted by mntr and transactions found in the log agree.
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Split(l, " | "); strings.HasPrefix(l, "| multilock-2 |") && len(f) > 4 && f[3] != f[4] {
			t.Errorf("mntr's proposals/acq %s, the log's %s: %s", f[3], f[4], l)
		}
	}
}
