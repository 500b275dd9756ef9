package ensemble

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// electionHello is the initial message of an election connection as a
// ZooKeeper 3.5+ member sends it: protocol version, server id, and the
// election address it listens on.
func electionHello(version, sid int64, addr string) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(version))
	b = binary.BigEndian.AppendUint64(b, uint64(sid))
	b = binary.BigEndian.AppendUint32(b, uint32(len(addr)))
	return append(b, addr...)
}

// throughAdvertiser sends msg through a fresh advertiser that knows the
// way back to member 2, and returns the first want bytes its member got.
func throughAdvertiser(t *testing.T, msg []byte, want int) []byte {
	t.Helper()
	member, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer member.Close()
	a, err := newAdvertiser(member.Addr().String())
	require.NoError(t, err)
	defer a.close()
	a.wayBack(2, 5555)

	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(a.port())))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write(msg)
	require.NoError(t, err)

	got, err := member.Accept()
	require.NoError(t, err)
	defer got.Close()
	require.NoError(t, got.SetReadDeadline(time.Now().Add(10*time.Second)))
	b := make([]byte, want)
	_, err = io.ReadFull(got, b)
	require.NoError(t, err)
	return b
}

func TestAdvertiserNamesTheWayBack(t *testing.T) {
	vote := []byte("the votes that follow, unchanged")
	tests := []struct {
		name string
		in   []byte
		want []byte
	}{
		{
			name: "a known member's address is replaced by its way back",
			in:   append(electionHello(-65536, 2, "127.0.0.1:41234"), vote...),
			want: append(electionHello(-65536, 2, "127.0.0.1:5555"), vote...),
		},
		{
			name: "several addresses (protocol 2) become the one way back",
			in:   append(electionHello(-65535, 2, "127.0.0.1:41234|10.0.0.1:41234"), vote...),
			want: append(electionHello(-65535, 2, "127.0.0.1:5555"), vote...),
		},
		{
			name: "an unknown member's address passes unchanged",
			in:   append(electionHello(-65536, 7, "127.0.0.1:41234"), vote...),
			want: append(electionHello(-65536, 7, "127.0.0.1:41234"), vote...),
		},
		{
			name: "the protocol before 3.5 (a bare id) passes unchanged",
			in:   append(binary.BigEndian.AppendUint64(nil, 2), vote...),
			want: append(binary.BigEndian.AppendUint64(nil, 2), vote...),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := throughAdvertiser(t, tc.in, len(tc.want))
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("the member got %q, want %q", got, tc.want)
			}
		})
	}
}

// An address longer than the servers accept ends the connection instead
// of being passed on.
func TestAdvertiserRefusesAnOversizedAddress(t *testing.T) {
	member, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer member.Close()
	a, err := newAdvertiser(member.Addr().String())
	require.NoError(t, err)
	defer a.close()

	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(a.port())))
	require.NoError(t, err)
	defer c.Close()
	msg := binary.BigEndian.AppendUint64(nil, uint64(1<<63)) // a negative version
	msg = binary.BigEndian.AppendUint64(msg, 2)
	msg = binary.BigEndian.AppendUint32(msg, initialMessageMax+1)
	_, err = c.Write(msg)
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "the advertiser closes the dialler's connection")
}
