package faulttest

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/zklocks/zklocks/internal/netns"
	"github.com/zklocks/zklocks/internal/zktest"
)

// soak is how long TestSoak runs; 0 (the default) skips it.
var soak = flag.Duration("soak", 0, "keep TestSoak's faults coming for this long (e.g. 10m); by default each comes once")

// timeline, when set, is where TestIsolatedMemberWithItsHolder draws the
// history of its sequential run as an SVG (docs/split-brain-timeline.svg).
var timeline = flag.String("timeline", "", "draw the split-brain run of sequential as an SVG into this file")

// seed, when not 0, replays the fault schedule of a TestRandomHalves run
// (it logs its seed).
var seed = flag.Uint64("seed", 0, "the seed of TestRandomHalves' fault schedule (0: a new one)")

func TestMain(m *testing.M) {
	// The pause test re-executes this binary as the holder it freezes.
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	// The namespaces a killed run of the TestNetns tests left behind
	// (its JVMs died with it: the parent-death signal).
	if removed, err := netns.Sweep(); len(removed) > 0 || err != nil {
		fmt.Fprintf(os.Stderr, "faulttest: swept %d namespace(s) of dead runs: %v (errors: %v)\n", len(removed), removed, err)
	}
	zktest.Main(m)
}
