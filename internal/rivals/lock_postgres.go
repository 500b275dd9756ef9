package rivals

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// PostgreSQL's advisory locks are held by a session (a connection's
// server process) or by a transaction, in the server's shared memory:
// nothing is written for them, and they last exactly as long as their
// session or transaction. There is no TTL: a frozen holder keeps its lock
// as long as its connection stays open, and a holder cut off keeps it
// until the server notices the dead connection (TCP keep-alives, by
// default hours on Linux) or the transaction ends. A waiter sleeps on the
// server's lock queue and is woken by the release itself, as in a local
// mutex. There is no fencing token: the protected data belongs in the
// same database, written in the transaction that holds the lock, where
// the lock and the write cannot part. Token returns 0.

// connectPG opens one connection whose interrupted queries are cancelled
// on the server (a cancel request) rather than by closing the socket:
// pgx's default closes it, and a server process waiting in
// pg_advisory_lock does not notice a closed socket, so it would go on
// waiting and take the lock, for nobody, when it came free.
func connectPG(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("rivals: postgres: %w", err)
	}
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 2 * time.Second}
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, ctxErr(ctx, "rivals: postgres connect", err)
	}
	return c, nil
}

// PGSessionLock is pg_advisory_lock: the lock belongs to the session and
// lasts until pg_advisory_unlock or the session's end.
type PGSessionLock struct {
	conn *pgx.Conn
	key  int64
	held bool
}

// NewPGSessionLock opens a connection of its own to dsn, for the lock
// named name (mapped onto an advisory-lock key by a hash).
func NewPGSessionLock(ctx context.Context, dsn, name string) (*PGSessionLock, error) {
	c, err := connectPG(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &PGSessionLock{conn: c, key: advisoryKey(name)}, nil
}

// Lock waits in pg_advisory_lock. A session's advisory locks count, so a
// second Lock of the same Locker is refused rather than stacked.
func (l *PGSessionLock) Lock(ctx context.Context) error {
	if l.held {
		return ErrHeld
	}
	if _, err := l.conn.Exec(ctx, "SELECT pg_advisory_lock($1)", l.key); err != nil {
		// The grant may have won the race with the cancel request.
		if ctx.Err() != nil {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseAfterCancel)
			_, _ = l.conn.Exec(uctx, "SELECT pg_advisory_unlock($1)", l.key)
			cancel()
		}
		return ctxErr(ctx, "rivals: postgres lock", err)
	}
	l.held = true
	return nil
}

// Unlock calls pg_advisory_unlock, which answers false when the session
// does not hold the lock (a new session after a lost connection).
func (l *PGSessionLock) Unlock(ctx context.Context) error {
	if !l.held {
		return fmt.Errorf("rivals: postgres unlock: %w", ErrNotHeld)
	}
	var released bool
	if err := l.conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", l.key).Scan(&released); err != nil {
		return ctxErr(ctx, "rivals: postgres unlock", err)
	}
	l.held = false
	if !released {
		return fmt.Errorf("rivals: postgres unlock: the session no longer held it: %w", ErrNotHeld)
	}
	return nil
}

// Token is 0: advisory locks have no fencing token.
func (l *PGSessionLock) Token() int64 { return 0 }

// Close ends the session, which releases its locks.
func (l *PGSessionLock) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), releaseAfterCancel)
	defer cancel()
	l.held = false
	return l.conn.Close(ctx)
}

// PGXactLock is pg_advisory_xact_lock: the lock belongs to a transaction
// that Lock begins and Unlock commits; it cannot be released otherwise.
// Work done in that transaction commits or vanishes with the hold.
type PGXactLock struct {
	conn *pgx.Conn
	key  int64
	tx   pgx.Tx // the open transaction while held
}

// NewPGXactLock opens a connection of its own to dsn, for the lock named
// name.
func NewPGXactLock(ctx context.Context, dsn, name string) (*PGXactLock, error) {
	c, err := connectPG(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &PGXactLock{conn: c, key: advisoryKey(name)}, nil
}

// Lock begins a transaction and waits in pg_advisory_xact_lock.
func (l *PGXactLock) Lock(ctx context.Context) error {
	if l.tx != nil {
		return ErrHeld
	}
	tx, err := l.conn.Begin(ctx)
	if err != nil {
		return ctxErr(ctx, "rivals: postgres begin", err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", l.key); err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseAfterCancel)
		_ = tx.Rollback(rctx) // ends the transaction and whatever it was granted
		cancel()
		return ctxErr(ctx, "rivals: postgres lock", err)
	}
	l.tx = tx
	return nil
}

// Tx is the transaction that holds the lock, nil when none: writes made
// in it are fenced by the lock for free.
func (l *PGXactLock) Tx() pgx.Tx { return l.tx }

// Unlock commits the transaction, which releases the lock. A failed
// commit has released it too (the transaction is over either way).
func (l *PGXactLock) Unlock(ctx context.Context) error {
	if l.tx == nil {
		return fmt.Errorf("rivals: postgres unlock: %w", ErrNotHeld)
	}
	err := l.tx.Commit(ctx)
	l.tx = nil
	if err != nil {
		return ctxErr(ctx, "rivals: postgres commit", err)
	}
	return nil
}

// Token is 0: advisory locks have no fencing token.
func (l *PGXactLock) Token() int64 { return 0 }

// Close rolls back an open transaction and closes the connection.
func (l *PGXactLock) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), releaseAfterCancel)
	defer cancel()
	var err error
	if l.tx != nil {
		err = l.tx.Rollback(ctx)
		l.tx = nil
	}
	return errors.Join(err, l.conn.Close(ctx))
}
