package timeout_test

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
		// Examples need ZooKeeper and cannot skip themselves under -short
		// as the tests do: leave them out.
		_ = flag.Set("test.run", "^(Test|Fuzz)")
	}
	zktest.Main(m)
}

// exampleConn opens a session for an Example on the tests' ensemble
// (ZK_SERVERS or the local one); close ends it.
func exampleConn() (conn *zk.Conn, close func()) {
	tb := &exampleTB{}
	return zktest.Connect(tb), tb.cleanup
}

// exampleTB is the testing.TB an Example does not get, for zktest: a
// failure panics, which fails the Example with the message.
type exampleTB struct {
	testing.TB // nil: zktest calls only the methods below
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

// examplePath returns a fresh lock path for an Example.
func examplePath(name string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return zktest.Root + "/Example" + name + "-" + hex.EncodeToString(b)
}
