package sequential_test

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
		// Examples talk to ZooKeeper and can not skip themselves like the
		// tests do under -short: leave them out.
		_ = flag.Set("test.run", "^Test")
	}
	zktest.Main(m)
}

// connect opens a session for an Example through zktest, so Examples use
// the same ensemble as the tests (ZK_SERVERS or the local one). The
// returned func closes it.
func connect() (*zk.Conn, func()) {
	tb := &exampleTB{}
	return zktest.Connect(tb, zktest.WithSessionTimeout(sessionTimeout)), tb.cleanup
}

// exampleTB stands in for the testing.TB an Example does not get: a
// failure panics, which fails the Example with its message.
type exampleTB struct {
	testing.TB // never called: the methods zktest uses are below
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

// lockPath returns a fresh lock path for an Example.
func lockPath(name string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return zktest.Root + "/Example" + name + "-" + hex.EncodeToString(b)
}
