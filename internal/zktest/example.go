package zktest

import (
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"
)

// MainWithExamples is Main for a package whose Examples talk to ZooKeeper.
// Examples can not skip themselves under -short as tests do, so there it
// runs only the tests and fuzz targets (which skip), unless -run says
// otherwise.
func MainWithExamples(m *testing.M) {
	flag.Parse()
	if testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		_ = flag.Set("test.run", "^(Test|Fuzz)")
	}
	Main(m)
}

// ExampleConn opens a session for an Example, which gets no testing.TB,
// on the tests' ensemble (ZK_SERVERS or the local one). The Example ends
// the session with the returned func. A failure panics, which fails the
// Example with the message.
func ExampleConn(opts ...ConnOption) (conn *zk.Conn, closeConn func()) {
	tb := &exampleTB{}
	return Connect(tb, opts...), tb.cleanup
}

// ExampleServers returns the tests' ensemble (ZK_SERVERS or the local
// one) to an Example that connects by itself.
func ExampleServers() []string { return Servers(&exampleTB{}) }

// ExamplePath returns a fresh lock path for one Example, so that runs
// against a shared ensemble do not meet.
func ExamplePath(name string) string {
	return Root + "/Example" + name + "-" + randomHex(6)
}

// exampleTB is the testing.TB zktest sees on behalf of an Example.
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
