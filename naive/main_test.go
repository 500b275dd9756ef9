package naive_test

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"testing"

	"github.com/zklocks/zklocks/internal/zktest"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		// The Examples need ZooKeeper and, unlike tests, can not skip
		// themselves: under -short run only the tests (which skip).
		_ = flag.Set("test.run", "^Test")
	}
	zktest.Main(m)
}

// exampleServers returns the ensemble the tests use (ZK_SERVERS or the
// local one zktest starts) to an Example, which gets no testing.TB.
func exampleServers() []string { return zktest.Servers(exampleTB{}) }

// exampleTB is the testing.TB zktest sees on behalf of an Example: a
// failure panics, which fails the Example with the message.
type exampleTB struct {
	testing.TB // nil: only the methods below are called
}

func (exampleTB) Helper()                      {}
func (exampleTB) Name() string                 { return "Example" }
func (exampleTB) Logf(string, ...any)          {}
func (exampleTB) Errorf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func (exampleTB) Fatal(args ...any)            { panic(fmt.Sprint(args...)) }
func (exampleTB) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func (exampleTB) Skip(args ...any)             { panic(fmt.Sprint(args...)) }

// examplePath returns a fresh lock path for one Example, so that runs
// against a shared ensemble do not meet.
func examplePath(name string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return zktest.Root + "/Example-" + hex.EncodeToString(b) + "/" + name
}
