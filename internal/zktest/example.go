package zktest

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"
)

// MainWithExamples is Main for a package whose Examples talk to ZooKeeper.
//
// An Example connects the way a program does, to the servers in
// ZK_SERVERS. So when ZK_SERVERS is unset (and the run is not -short),
// MainWithExamples starts the local ensemble before the run and sets
// ZK_SERVERS to it in this process's environment. The package's tests
// still treat that ensemble as local: Ensemble and PrivateEnsemble do not
// skip because of it.
//
// Examples can not skip themselves under -short as tests do, so there it
// runs only the tests and fuzz targets (which skip), unless -run says
// otherwise.
func MainWithExamples(m *testing.M) {
	flag.Parse()
	run := flag.Lookup("test.run").Value.String()
	if testing.Short() && run == "" {
		_ = flag.Set("test.run", "^(Test|Fuzz)")
	}
	if !testing.Short() && external() == nil {
		// Started for the Examples; the tests would start it anyway,
		// unless the run selects only tests that need no ZooKeeper.
		exportLocal()
	}
	Main(m)
}

// exportLocal starts the local ensemble and sets ZK_SERVERS to it. When
// the start fails it says why on stderr: the Examples then fail to
// connect, and every test that needs ZooKeeper fails with the same error.
func exportLocal() {
	e, _, err := startLocal()
	if err != nil {
		fmt.Fprintf(os.Stderr, "zktest: no ensemble for the Examples: %v\n", err)
		return
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "zktest: started a local %d-node ZooKeeper %s ensemble in %v for the Examples: ZK_SERVERS=%s\n",
			e.Size(), e.Version(), local.took.Round(time.Millisecond), e.ConnectString())
	}
	local.mu.Lock()
	defer local.mu.Unlock()
	local.exported = e.ConnectString()
	_ = os.Setenv("ZK_SERVERS", local.exported) // fails only on a malformed name
}
