package netns

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if os.Getenv(killedChildEnv) != "" {
		os.Exit(killedChild())
	}
	// What a killed run left behind (a test binary killed before its
	// cleanups): its namespaces, their veths and bridge, and whatever
	// still runs in them. Live runs' namespaces are left alone.
	if removed, err := Sweep(); len(removed) > 0 || err != nil {
		fmt.Fprintf(os.Stderr, "netns: swept %d namespace(s) of dead runs: %v (errors: %v)\n", len(removed), removed, err)
	}
	code := m.Run()
	// Every test closes what it made: nothing of this process may be left.
	if nss, pids := Leftovers(fmt.Sprintf("%s%d-", Prefix, os.Getpid())); len(nss) > 0 || len(pids) > 0 {
		fmt.Fprintf(os.Stderr, "netns: the tests left namespaces %v and processes %v\n", nss, pids)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
