package netns

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// DialContext opens a connection from the node's namespace: the socket
// belongs to the node's network stack (its address, its routes, its
// nftables rules, its TCP timers) for the rest of its life, whichever
// thread later reads or writes it. See the package doc for why.
func (nd *Node) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := nd.do(func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// DialTimeout is DialContext bounded by timeout, in the form of
// go-zookeeper's zk.Dialer: pass nd.DialTimeout to zk.WithDialer.
func (nd *Node) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return nd.DialContext(ctx, network, addr)
}

// do runs f on an OS thread that has entered the node's network
// namespace, and brings the thread back to the namespace it came from
// before letting other goroutines run on it. Should the way back fail,
// the goroutine never unlocks its thread, and the Go runtime ends the
// thread with it (the main thread, which the runtime never ends, is
// parked for good: either way no other goroutine runs in the node's
// namespace).
func (nd *Node) do(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netns: open this thread's namespace: %w", err)
			return
		}
		defer unix.Close(home)
		fd, err := unix.Open(nsDir+"/"+nd.NS, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netns: open namespace %s: %w", nd.NS, err)
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netns: enter namespace %s: %w", nd.NS, err)
			return
		}
		err = f()
		if unix.Setns(home, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// Command returns cmd to run inside the node's namespace, behind
// ip netns exec (which execs it: the process keeps its pid).
func (nd *Node) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", nd.NS, name}, args...)...)
}

// Wrap prefixes argv with ip netns exec into the node's namespace.
func (nd *Node) Wrap(argv []string) []string {
	return append([]string{"ip", "netns", "exec", nd.NS}, argv...)
}

// Listen opens a listener in the node's namespace (see DialContext).
func (nd *Node) Listen(ctx context.Context, network, addr string) (net.Listener, error) {
	var l net.Listener
	err := nd.do(func() error {
		var err error
		l, err = (&net.ListenConfig{}).Listen(ctx, network, addr)
		return err
	})
	return l, err
}
