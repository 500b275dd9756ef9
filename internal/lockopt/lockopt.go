// Package lockopt holds the options of every lock, behind the one
// zklocks.Option type: the ones all variants share (ACL, logger) as
// fields, and each variant's own by name, so that a variant can tell an
// option meant for another variant from its own and refuse it instead of
// ignoring it.
package lockopt

import (
	"log/slog"
	"maps"
	"slices"

	"github.com/go-zookeeper/zk"
)

// Options is what a lock's options set.
type Options struct {
	ACL    []zk.ACL
	Logger *slog.Logger

	own map[string]any // a variant's own options, by the option's name
}

// Set records a variant's own option under its name, such as
// "timeout.WithLease".
func (o *Options) Set(name string, v any) {
	if o.own == nil {
		o.own = map[string]any{}
	}
	o.own[name] = v
}

// Take returns the value of the option named name and forgets it; ok is
// false when it was not given.
// A value of another type is left for Left to report.
func Take[T any](o *Options, name string) (v T, ok bool) {
	v, ok = o.own[name].(T)
	if ok {
		delete(o.own, name)
	}
	return v, ok
}

// Left returns, sorted, the names of the options no Take consumed: given
// to a variant they do not belong to.
func (o *Options) Left() []string { return slices.Sorted(maps.Keys(o.own)) }

// Data is the option that stores data in a lock's node under the
// variant's name for it (sequential.WithData, rwlock.WithData): a copy,
// so that the caller may reuse its slice.
func Data(name string, data []byte) func(*Options) {
	data = append([]byte(nil), data...)
	return func(o *Options) { o.Set(name, data) }
}
