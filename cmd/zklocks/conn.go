package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	zkl "github.com/zklocks/zklocks" // named: the tests have a func zklocks
)

// connect opens a session with the given timeout and waits until it is
// established or ctx ends (zklocks.Connect). opts are go-zookeeper's
// connection options (zk.WithEventCallback, ...); its option type is not
// exported, hence the plain func type.
func connect(ctx context.Context, addrs []string, timeout time.Duration, opts ...func(*zk.Conn)) (*zkl.Session, error) {
	s, err := zkl.Connect(ctx, addrs, timeout, zkl.WithZKLogger(quietLogger{}), zkl.WithZKOptions(opts...))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", strings.Join(addrs, ","), err)
	}
	return s, nil
}

// quietLogger keeps go-zookeeper's connection chatter off the terminal.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
