package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zklocks/zklocks/bench"
)

// A peer whose client is missing: left out of the default list with a
// line saying how to install it, but a failure when named in -variants.
func TestBenchVariantsMissingPeer(t *testing.T) {
	bench.Register(bench.Variant{Name: "missing-peer", Driver: &bench.Driver{
		Available: func() error { return fmt.Errorf("missing-peer: %w (%s)", bench.ErrPeerMissing, bench.PeersInstallHint) },
	}})
	var stderr bytes.Buffer
	f := benchFlags{variants: "sequential,missing-peer"}
	vs, skipped, err := benchVariants(f, &stderr)
	if err != nil || len(vs) != 1 || vs[0].Name != "sequential" || len(skipped) != 1 {
		t.Fatalf("default list: %v, skipped %v, %v", vs, skipped, err)
	}
	if msg := stderr.String(); strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "scripts/install-peers.sh") {
		t.Errorf("message %q: want one line naming scripts/install-peers.sh", msg)
	}
	f.variantsSet = true
	if _, _, err := benchVariants(f, &stderr); !errors.Is(err, bench.ErrPeerMissing) {
		t.Errorf("named in -variants: %v, want ErrPeerMissing", err)
	}
}

func TestRunOrderPutsPeersAfterSequential(t *testing.T) {
	var vs []bench.Variant
	for _, n := range []string{"naive", "kazoo", "sequential", "timeout", "zk-peer", "curator"} {
		vs = append(vs, bench.Variant{Name: n})
	}
	var got []string
	for _, v := range runOrder(vs) {
		got = append(got, v.Name)
	}
	if want := "sequential zk-peer curator kazoo naive timeout"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

func TestBenchDefaults(t *testing.T) {
	f, err := parseBenchFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if f.rounds < 5 || f.variantsSet {
		t.Errorf("rounds %d, variantsSet %v", f.rounds, f.variantsSet)
	}
	if f.out != defaultOut || !strings.Contains(commands["bench"].summary, "write "+f.out+"/") {
		t.Errorf("bench writes %q by default; the usage says %q", f.out, commands["bench"].summary)
	}
	for _, p := range []string{"curator", "kazoo", "zk-peer"} {
		if !strings.Contains(","+f.variants+",", ","+p+",") {
			t.Errorf("default variants %q lack %s", f.variants, p)
		}
	}
}
