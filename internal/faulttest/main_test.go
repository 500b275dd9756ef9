package faulttest

import (
	"flag"
	"os"
	"testing"

	"github.com/zklocks/zklocks/internal/zktest"
)

// soak is how long TestSoak runs; 0 (the default) skips it.
var soak = flag.Duration("soak", 0, "run TestSoak for this long (e.g. 10m); 0 skips it")

func TestMain(m *testing.M) {
	// The pause test re-executes this binary as the holder it freezes.
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	zktest.Main(m)
}
