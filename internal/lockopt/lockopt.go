// Package lockopt reads the options of a lock (zklocks.Option): the ones
// all variants share (ACL, logger) into fields, and each variant's own by
// name, so that a variant can tell an option meant for another variant
// from its own and refuse it instead of ignoring it.
package lockopt

import (
	"bytes"
	"log/slog"
	"maps"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
)

// Options is what a lock's options set.
type Options struct {
	ACL    []zk.ACL
	Logger *slog.Logger

	own map[string]any // a variant's own options, by the option's name
}

// Read collects opts, the last of a name winning; the ACL is
// zk.WorldACL(zk.PermAll) unless one is given.
func Read(opts []zklocks.Option) Options {
	o := Options{own: map[string]any{}}
	for _, opt := range opts {
		if opt.Name() != "" {
			o.own[opt.Name()] = opt.Value()
		}
	}
	o.ACL, _ = Take[[]zk.ACL](&o, "zklocks.WithACL")
	if o.ACL == nil {
		o.ACL = zk.WorldACL(zk.PermAll)
	}
	o.Logger, _ = Take[*slog.Logger](&o, "zklocks.WithLogger")
	return o
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
func Data(name string, data []byte) zklocks.Option {
	return zklocks.VariantOption(name, bytes.Clone(data))
}
