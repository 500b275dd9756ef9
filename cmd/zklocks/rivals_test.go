package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRivalsFlags(t *testing.T) {
	f, err := parseRivalsFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.systems) != len(allRivals) || len(f.ns) == 0 || f.rounds < 6 {
		t.Errorf("defaults: %+v", f)
	}
	for _, args := range [][]string{
		{"-systems", "consul"}, {"-systems", ","}, {"-n", "0"}, {"-rounds", "0"}, {"-duration", "0s"}, {"-idle", "-1s"}, {"extra"},
	} {
		var ue usageError
		if _, err := parseRivalsFlags(args, &bytes.Buffer{}); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// TestRivalsRun runs ZooKeeper and two rivals briefly and reads the table. A server
// that cannot start is a failed test (it says how to install it), and a
// skip under -short.
func TestRivalsRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"rivals", "-systems", "zookeeper,redis,postgres-xact", "-n", "1,2", "-rounds", "2", "-duration", "100ms"},
		&stdout, &stderr)
	if strings.Contains(stdout.String(), "left out") || code != 0 {
		msg := fmt.Sprintf("zklocks rivals: status %d\n", code) + stdout.String() + stderr.String() +
			"\n(scripts/install-rivals.sh installs the servers)"
		if testing.Short() {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	for _, row := range []string{"| zookeeper | 2 |", "quorum writes |", "| redis | 1 |", "| redis | 2 |", "| postgres-xact | 2 |", "AOF bytes |", "WAL bytes |"} {
		if !strings.Contains(stdout.String(), row) {
			t.Errorf("no row %q in\n%s", row, stdout.String())
		}
	}
}
