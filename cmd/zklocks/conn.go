package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// connect opens a session with the given timeout and waits until it is
// established or ctx ends. go-zookeeper drops session events nobody reads,
// so the rest of them are drained.
func connect(ctx context.Context, addrs []string, timeout time.Duration) (*zk.Conn, error) {
	conn, events, err := zk.Connect(addrs, timeout, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
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
			conn.Close()
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
