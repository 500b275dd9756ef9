package rivals

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The counters below tell what a system wrote durably, read before and
// after a run: divided by the run's acquisitions they give the durable
// writes one acquisition costs, each in the unit its system logs in.

// RaftIndex is the highest Raft log index among the members: every entry
// (a put, a delete, a lease grant or revoke) is fsynced to the WAL of a
// majority before it is applied. Lease renewals are not entries.
func (e *Etcd) RaftIndex(ctx context.Context) (uint64, error) {
	c, err := e.Client()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	var top uint64
	for _, ep := range e.endpoints {
		st, err := c.Status(ctx, ep)
		if err != nil {
			return 0, fmt.Errorf("rivals: etcd status of %s: %w", ep, err)
		}
		top = max(top, st.RaftIndex)
	}
	return top, nil
}

// AOFBytes is the size of the server's append-only file (INFO
// persistence, aof_current_size): what it has logged, fsynced once a
// second. A rewrite of the file shrinks it; a run that saw one gives a
// negative difference.
func (r *Redis) AOFBytes(ctx context.Context) (int64, error) {
	c := newRedisClient(r.Addr)
	defer c.Close()
	info, err := c.Info(ctx, "persistence").Result()
	if err != nil {
		return 0, fmt.Errorf("rivals: %s INFO: %w", r.Name, err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "aof_current_size:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("rivals: %s aof_current_size %q: %w", r.Name, v, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("rivals: %s reports no aof_current_size (is appendonly on?)", r.Name)
}

// WALBytes is the position of the write-ahead log in bytes
// (pg_current_wal_lsn): everything the server has logged, lock work and
// background work (checkpoints, autovacuum) alike.
func (pg *Postgres) WALBytes(ctx context.Context) (int64, error) {
	c, err := pgx.Connect(ctx, pg.DSN())
	if err != nil {
		return 0, fmt.Errorf("rivals: %s: %w", pg.Name, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	var n int64
	if err := c.QueryRow(ctx, "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint").Scan(&n); err != nil {
		return 0, fmt.Errorf("rivals: %s WAL position: %w", pg.Name, err)
	}
	return n, nil
}
