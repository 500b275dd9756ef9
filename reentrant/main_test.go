package reentrant_test

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zktest"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		// The Examples need ZooKeeper and, unlike tests, cannot skip
		// themselves: under -short, run the tests (which skip) only.
		_ = flag.Set("test.run", "^Test")
	}
	zktest.Main(m)
}

// exampleConn opens a session for an Example, which gets no testing.TB,
// through zktest (so it uses the tests' ensemble: ZK_SERVERS or the local
// one). The Example closes it with the returned func.
func exampleConn() (*zk.Conn, func()) {
	tb := &exampleTB{}
	return zktest.Connect(tb), tb.cleanup
}

// exampleTB is the testing.TB zktest sees on behalf of an Example: a
// failure panics, which fails the Example with the message.
type exampleTB struct {
	testing.TB // nil: only the methods below are called
	cleanups   []func()
}

func (*exampleTB) Helper()                      {}
func (*exampleTB) Name() string                 { return "Example" }
func (*exampleTB) Logf(string, ...any)          {}
func (*exampleTB) Errorf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func (*exampleTB) Fatal(args ...any)            { panic(fmt.Sprint(args...)) }
func (*exampleTB) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func (*exampleTB) Skip(args ...any)             { panic(fmt.Sprint(args...)) }
func (t *exampleTB) Cleanup(f func())           { t.cleanups = append(t.cleanups, f) }

func (t *exampleTB) cleanup() {
	for _, f := range slices.Backward(t.cleanups) {
		f()
	}
}

// examplePath returns a fresh lock path for one Example.
func examplePath(name string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return zktest.Root + "/Example" + name + "-" + hex.EncodeToString(b)
}
