package ensemble

import (
	"bufio"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// closedPort returns a loopback port that nothing listens on (yet).
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// echoOnce accepts one connection on ln, answers its first line with the
// same line and then closes, as a leader that ends a follower's link.
func echoOnce(t *testing.T, ln net.Listener) {
	t.Helper()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil {
			_, _ = io.WriteString(c, line)
		}
	}()
}

func dialRedialer(t *testing.T, r *redialer) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", r.ln.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	return c
}

// The case it exists for: a follower dials while its leader is not yet
// listening. The connection is held and reaches the leader once it does.
func TestRedialerHoldsAConnectionUntilTheUpstreamListens(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	addr := closedPort(t)
	r, err := newRedialer(addr)
	require.NoError(t, err)
	defer r.close()

	c := dialRedialer(t, r)
	_, err = io.WriteString(c, "followerinfo\n")
	require.NoError(t, err)
	time.Sleep(redialEvery) // refused at least once: the case under test, not a synchronisation
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the port was taken meanwhile: run again")
	defer ln.Close()
	echoOnce(t, ln)

	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err, "the held connection reaches the upstream once it listens")
	assert.Equal(t, "followerinfo\n", line)
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the upstream's close ends the downstream too")
}

// An upstream that never comes: the connection is closed after the last try,
// as the proxy alone would have closed it at once.
func TestRedialerGivesUpOnAnUpstreamThatNeverListens(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	r, err := newRedialer(closedPort(t))
	require.NoError(t, err)
	defer r.close()

	start := time.Now()
	c := dialRedialer(t, r)
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF)
	assert.GreaterOrEqual(t, time.Since(start), (redialTries-1)*redialEvery, "closed only after every try")
}

// close ends the connections it forwards and every goroutine it started,
// including one still redialling.
func TestRedialerCloseEndsItsConnections(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	up, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer up.Close()
	r, err := newRedialer(up.Addr().String())
	require.NoError(t, err)
	stuck, err := newRedialer(closedPort(t))
	require.NoError(t, err)

	forwarded := dialRedialer(t, r)
	redialling := dialRedialer(t, stuck)
	_, err = io.WriteString(forwarded, "x")
	require.NoError(t, err)
	require.NoError(t, up.(*net.TCPListener).SetDeadline(time.Now().Add(10*time.Second)))
	held, err := up.Accept()
	require.NoError(t, err)
	defer held.Close()
	require.NoError(t, held.SetDeadline(time.Now().Add(10*time.Second)))
	require.Eventually(t, func() bool {
		stuck.mu.Lock()
		defer stuck.mu.Unlock()
		return len(stuck.conns) > 0
	}, 5*time.Second, time.Millisecond, "the stuck redialer took the connection")

	r.close()
	stuck.close()
	for _, c := range []net.Conn{forwarded, redialling, held} {
		_, err = io.ReadAll(c)
		assert.NotErrorIs(t, err, os.ErrDeadlineExceeded, "closed (an end of file, or a reset where data was in flight), not left open")
	}
	_, err = net.Dial("tcp", r.ln.Addr().String())
	assert.Error(t, err, "a closed redialer accepts nothing")
}
