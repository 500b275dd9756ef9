package lockopt

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
)

func TestReadSharedOptionsIntoFieldsAndKeepsTheRestByName(t *testing.T) {
	acl := zk.DigestACL(zk.PermAll, "u", "p")
	log := slog.Default()
	o := Read([]zklocks.Option{{}, zklocks.WithACL(acl), zklocks.WithLogger(log), zklocks.VariantOption("x.WithY", 3)})
	if !slices.Equal(o.ACL, acl) || o.Logger != log {
		t.Errorf("Read: ACL %v, Logger %v; want %v, %v", o.ACL, o.Logger, acl, log)
	}
	if got := o.Left(); !slices.Equal(got, []string{"x.WithY"}) {
		t.Errorf("Left() = %v before any Take, want [x.WithY]", got)
	}
	if _, ok := Take[string](&o, "x.WithY"); ok {
		t.Error(`Take[string] of an int option reported ok`)
	}
	if v, ok := Take[int](&o, "x.WithY"); !ok || v != 3 {
		t.Errorf("Take[int] = %v, %v; want 3, true", v, ok)
	}
	if got := o.Left(); len(got) != 0 {
		t.Errorf("Left() = %v after the Take, want none", got)
	}
}

func TestReadDefaultsTheACLToWorldAll(t *testing.T) {
	if o := Read(nil); !slices.Equal(o.ACL, zk.WorldACL(zk.PermAll)) || o.Logger != nil {
		t.Errorf("Read(nil): ACL %v, Logger %v; want the world ACL and no logger", o.ACL, o.Logger)
	}
}

func TestDataCopiesTheCallersSlice(t *testing.T) {
	b := []byte("abc")
	opt := Data("x.WithData", b)
	b[0] = 'z'
	if got := opt.Value().([]byte); string(got) != "abc" {
		t.Errorf("Data's value = %q after the caller's write, want abc", got)
	}
}
