package zklocks

import (
	"log/slog"

	"github.com/go-zookeeper/zk"
)

// Option configures one lock, of any variant: the constructors of all of
// them (sequential.New, naive.New, ...) take these. A variant's own
// options (timeout.WithLease, reentrant.WithCountMode, ...) are Options
// too; a constructor given another variant's option fails with
// ErrBadOption rather than ignore it. The zero Option sets nothing.
type Option struct {
	name  string
	value any
}

// The names of the options every variant takes.
const (
	optACL    = "zklocks.WithACL"
	optLogger = "zklocks.WithLogger"
)

// WithACL sets the ACL of the nodes a lock creates: its own node and any
// missing parents. The default is zk.WorldACL(zk.PermAll).
func WithACL(acl []zk.ACL) Option { return Option{optACL, acl} }

// WithLogger makes a lock write its operation log to l: acquire, wait,
// release, lost and abandon events, with stable messages and keys
// (docs/oplog.md lists them, and what each variant adds). nil, the
// default, turns the log off; it then costs nothing.
func WithLogger(l *slog.Logger) Option { return Option{optLogger, l} }

// VariantOption is how a variant's package makes an option of its own:
// name is the function a user calls, such as "timeout.WithLease", and is
// what ErrBadOption names when the option reaches another variant. Users
// call that function, not this one.
func VariantOption(name string, value any) Option { return Option{name, value} }

// Name returns the name of the option: "zklocks.WithACL",
// "timeout.WithLease", or "" for the zero Option.
func (o Option) Name() string { return o.name }

// Value returns what the option sets.
func (o Option) Value() any { return o.value }
