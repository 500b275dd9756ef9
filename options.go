package zklocks

import (
	"log/slog"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/lockopt"
)

// Option configures one lock, of any variant: the constructors of all of
// them (sequential.New, naive.New, ...) take these. A variant's own
// options (timeout.WithLease, reentrant.WithCountMode, ...) are Options
// too; a constructor given another variant's option fails with
// ErrBadOption rather than ignore it.
type Option func(*lockopt.Options)

// WithACL sets the ACL of the nodes a lock creates: its own node and any
// missing parents. The default is zk.WorldACL(zk.PermAll).
func WithACL(acl []zk.ACL) Option {
	return func(o *lockopt.Options) { o.ACL = acl }
}

// WithLogger makes a lock write its operation log to l: acquire, wait,
// release, lost and abandon events, with stable messages and keys
// (docs/oplog.md lists them, and what each variant adds). nil, the
// default, turns the log off; it then costs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(o *lockopt.Options) { o.Logger = l }
}
