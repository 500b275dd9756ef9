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
// established or ctx ends. go-zookeeper drops session events nobody reads,
// so the rest of them are drained. When ctx ends first it returns at
// once: closing a connection that never had a session can take go-zookeeper
// a second, so that close finishes in the background.
//
// opts are go-zookeeper's connection options (zk.WithEventCallback, ...);
// its option type is not exported, hence the plain func type.
func connect(ctx context.Context, addrs []string, timeout time.Duration, opts ...func(*zk.Conn)) (*zk.Conn, error) {
	extra := func(c *zk.Conn) {
		for _, o := range opts {
			o(c)
		}
	}
	conn, events, err := zkl.Connect(addrs, timeout, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}), extra)
	if err != nil {
		return nil, err
	}
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go drainEvents(events)
				return conn, nil
			}
		case <-ctx.Done():
			go conn.Close()
			return nil, fmt.Errorf("connect to %s: %w", strings.Join(addrs, ","), ctx.Err())
		}
	}
}

func drainEvents(events <-chan zk.Event) {
	for range events {
	}
}

// quietLogger keeps go-zookeeper's connection chatter off the terminal.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
