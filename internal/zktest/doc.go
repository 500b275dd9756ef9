// Package zktest is the test helper of every package that talks to
// ZooKeeper: it finds (or starts) the ensemble, opens one session per
// simulated client, makes unique lock paths, and cuts connections to make
// sessions expire.
//
// A package's tests use it like this:
//
//	func TestMain(m *testing.M) { zktest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		conn := zktest.Connect(t)     // fails the test when no ZooKeeper
//		path := zktest.LockPath(t)    // "/zklocks-test/TestSomething-1f2e..."
//		...
//	}
//
// The ensemble is ZK_SERVERS (host:port,...) when that is set, else a local
// three-node ensemble (internal/ensemble) started once per test binary on
// first use and closed by Main. Without any ZooKeeper the tests fail with a
// message that says how to install one; only go test -short skips them.
// A package whose Examples talk to ZooKeeper uses MainWithExamples instead
// of Main: its Examples connect to ZK_SERVERS as a program would, so when
// that is unset it starts the local ensemble first and sets ZK_SERVERS to it.
//
// Fault tests get the local ensemble itself from Ensemble (to stop, kill or
// restart members), cut one client off with a Cutter, or have its session
// expired with ExpireSession. Tests that check for leaked goroutines call
// VerifyNoLeaks first, or pass IgnoreEnsemble to goleak themselves: the
// shared ensemble keeps a few goroutines for the life of the binary.
package zktest
