package ensemble

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// FourLetterTimeout bounds one FourLetter exchange, dial included.
const FourLetterTimeout = 3 * time.Second

// FourLetter sends a four-letter-word command (srvr, mntr, ruok, ...) to the
// server at addr and returns its whole answer. It blocks until the server
// closes the connection or FourLetterTimeout passes.
func FourLetter(addr, cmd string) (string, error) {
	return fourLetter((&net.Dialer{}).DialContext, addr, cmd)
}

// fourLetter is FourLetter through dial (Config.Dial).
func fourLetter(dial func(ctx context.Context, network, addr string) (net.Conn, error), addr, cmd string) (string, error) {
	deadline := time.Now().Add(FourLetterTimeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("ensemble: %s %s: %w", cmd, addr, err)
	}
	defer c.Close()
	if err := c.SetDeadline(deadline); err != nil {
		return "", fmt.Errorf("ensemble: %s %s: %w", cmd, addr, err)
	}
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", fmt.Errorf("ensemble: %s %s: %w", cmd, addr, err)
	}
	out, err := io.ReadAll(c)
	if err != nil {
		return "", fmt.Errorf("ensemble: %s %s: %w", cmd, addr, err)
	}
	s := string(out)
	if strings.Contains(s, "is not executed because it is not in the whitelist") {
		return "", fmt.Errorf("ensemble: %s %s: %s", cmd, addr, strings.TrimSpace(s))
	}
	return s, nil
}

// Status is the part of a server's srvr answer that the tools use.
type Status struct {
	Version     string // e.g. "3.8.0-..." (the text before ", built on")
	Mode        string // leader, follower, observer, standalone
	Zxid        int64
	Connections int
	NodeCount   int
}

// Serving reports whether the server answers client requests as a member
// of a quorum (or as a standalone server).
func (s Status) Serving() bool {
	switch s.Mode {
	case "leader", "follower", "observer", "standalone":
		return true
	}
	return false
}

// ServerStatus asks the server at addr for srvr and parses the answer. A
// server that runs but has no quorum yet gives a Status with an empty Mode.
func ServerStatus(addr string) (Status, error) {
	out, err := FourLetter(addr, "srvr")
	if err != nil {
		return Status{}, err
	}
	return parseSrvr(out)
}

func parseSrvr(out string) (Status, error) {
	var st Status
	if strings.Contains(out, "not currently serving requests") {
		return st, nil
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Zookeeper version":
			st.Version, _, _ = strings.Cut(v, ", built on")
			// Debian's build leaves an unexpanded "-${mvngit.commit.id}".
			st.Version, _, _ = strings.Cut(st.Version, "-${")
		case "Mode":
			st.Mode = v
		case "Zxid":
			st.Zxid, _ = strconv.ParseInt(strings.TrimPrefix(v, "0x"), 16, 64)
		case "Connections":
			st.Connections, _ = strconv.Atoi(v)
		case "Node count":
			st.NodeCount, _ = strconv.Atoi(v)
		}
	}
	if st.Mode == "" && st.Version == "" {
		return st, fmt.Errorf("ensemble: unexpected srvr answer %q", out)
	}
	return st, nil
}

// Metrics is a server's mntr answer: metric name to value, as text.
type Metrics map[string]string

// Int returns a metric as an integer (ZooKeeper prints counters as
// integers and averages as decimals; a decimal is truncated).
func (m Metrics) Int(name string) (int64, error) {
	v, ok := m[name]
	if !ok {
		return 0, fmt.Errorf("ensemble: mntr has no %s", name)
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("ensemble: mntr %s=%q is not a number: %w", name, v, err)
	}
	return int64(f), nil
}

// MntrAt asks the server at addr for mntr and parses the answer.
func MntrAt(addr string) (Metrics, error) {
	out, err := FourLetter(addr, "mntr")
	if err != nil {
		return nil, err
	}
	return ParseMntr(out), nil
}

// ParseMntr parses mntr output: one "name<TAB>value" per line.
func ParseMntr(out string) Metrics {
	m := Metrics{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}
