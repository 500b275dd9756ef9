// Package lockbase is the shell every lock's constructor shares: it
// checks the session, the path and the options once, for every variant,
// and keeps what each lock needs of them. A variant's New is then one
// call to Open and the variant's own fields, so that a diff between two
// variants shows their recipes, not their boilerplate.
package lockbase

import (
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/liveness"
	"github.com/zklocks/zklocks/internal/lockerr"
	"github.com/zklocks/zklocks/internal/lockopt"
	"github.com/zklocks/zklocks/internal/oplog"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

// Base is what a lock keeps of its constructor's arguments.
type Base struct {
	Pkg     string // the variant: its errors' prefix and its log's lock
	Path    string
	Session *zklocks.Session
	ACL     []zk.ACL
	Log     *oplog.Log   // nil when off
	Client  *zkop.Client // the lock's requests, on the session's shared clock
}

// Own takes a variant's own options out of o (lockopt.Take) and checks
// them; an error it returns is New's, wrapped with the variant's prefix.
type Own func(o *lockopt.Options) error

// Open checks New's arguments for variant pkg and returns the Base. It
// fails with zklocks.ErrNilSession, zklocks.ErrBadPath, the error of own,
// or zklocks.ErrBadOption when an option belongs to another variant. It
// sends nothing to ZooKeeper. reasons name the variant's own ways of
// losing a hold in its log.
func Open(pkg string, s *zklocks.Session, path string, opts []zklocks.Option, own Own, reasons ...oplog.Reason) (*Base, error) {
	fail := func(err error) (*Base, error) { return nil, lockerr.Wrap(pkg, "new", path, err) }
	if s == nil {
		return fail(zklocks.ErrNilSession)
	}
	if err := zkpath.Validate(path); err != nil {
		return fail(fmt.Errorf("%w: %v", zklocks.ErrBadPath, err))
	}
	o := lockopt.Read(opts)
	if own != nil {
		if err := own(&o); err != nil {
			return fail(err)
		}
	}
	if left := o.Left(); len(left) > 0 {
		return fail(fmt.Errorf("%w: %s is not an option of %s", zklocks.ErrBadOption, strings.Join(left, ", "), pkg))
	}
	return &Base{Pkg: pkg, Path: path, Session: s, ACL: o.ACL,
		Log:    oplog.New(o.Logger, pkg, path, reasons...),
		Client: zkop.New(s.Conn(), liveness.SessionClock(s))}, nil
}

// Fail gives an error of the lock's API the variant's prefix, and makes
// one that says the session expired say lost too (internal/lockerr).
func (b *Base) Fail(op string, err error) error {
	return lockerr.Wrap(b.Pkg, op, b.Path, lockerr.Lost(err, zklocks.ErrLockLost))
}

// Stats returns the requests the lock has sent and the watch events it
// has received.
func (b *Base) Stats() zklocks.Stats {
	requests, notifications := b.Client.Counts()
	return zklocks.Stats{Requests: requests, Notifications: notifications}
}
