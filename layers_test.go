package zklocks_test

import (
	"go/build"
	"strings"
	"testing"
)

// The module's packages in layers, lowest first: a package may import
// only packages of a lower layer (and the variants one another, as
// multilock builds on sequential). docs/hardening.md and each package's
// doc assume this order; a new import that runs back up fails here.
var layers = [][]string{
	{"internal/zkpath", "internal/lockerr", "internal/zkconn"}, // leaves
	{"internal/liveness"},                  // the session's clock
	{"internal/zkop"},                      // the ZooKeeper call wrapper
	{"internal/hold"},                      // the hold watcher
	{"internal/oplog"},                     // the operation log
	{""},                                   // the root package: Session, errors, Option
	{"internal/lockq", "internal/lockopt"}, // the queue, the options
	{"internal/lockbase"},                  // the lock shell
	{"naive", "sequential", "reentrant", "timeout", "rwlock", "semaphore", "election", "textbook"},
	{"multilock"},
}

const module = "github.com/zklocks/zklocks"

func TestImportsRunDownTheLayers(t *testing.T) {
	rank := map[string]int{}
	for r, layer := range layers {
		for _, p := range layer {
			rank[strings.TrimSuffix(module+"/"+p, "/")] = r
		}
	}
	for path, r := range rank {
		dir := "./" + strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			ir, known := rank[imp]
			switch {
			case !known:
				t.Errorf("%s imports %s, which has no layer in layers_test.go", path, imp)
			case ir >= r:
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must run down the layers", path, r, imp, ir)
			}
		}
	}
}
