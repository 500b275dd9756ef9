package callpath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Module is this module's path; ZK is go-zookeeper's package, where a
// tree stops.
const (
	Module = "github.com/zklocks/zklocks"
	ZK     = "github.com/go-zookeeper/zk"
)

// Variants are the lock packages, each a directory at the module root:
// the VARIANT of a VARIANT.METHOD.
var Variants = []string{"naive", "sequential", "reentrant", "timeout", "rwlock", "semaphore", "election", "multilock"}

// Program is the variants, type-checked with everything they import. A
// variant's call graph is built the first time a tree of it is asked for.
type Program struct {
	root   string
	pkgs   map[string]*packages.Package // by variant
	graphs map[string]*graph            // by variant
}

// FindRoot returns the root of this module at or above dir: the directory
// whose go.mod declares Module. Loading needs the module's source.
func FindRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			if modulePath(string(b)) != Module {
				return "", fmt.Errorf("%s is not module %s: run from its checkout", filepath.Join(d, "go.mod"), Module)
			}
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod at or above %s: run from a checkout of %s", dir, Module)
		}
	}
}

// modulePath reads the module line of a go.mod.
func modulePath(gomod string) string {
	for _, line := range strings.Split(gomod, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// Load type-checks the variants under root, the module root, and
// everything they import. It runs the go command: about a second.
func Load(root string) (*Program, error) {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax | packages.NeedModule, Dir: root}
	patterns := make([]string, len(Variants))
	for i, v := range Variants {
		patterns[i] = Module + "/" + v
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("load the variants: %w", err)
	}
	if err := loadErrors(pkgs); err != nil {
		return nil, err
	}
	p := &Program{root: root, pkgs: map[string]*packages.Package{}, graphs: map[string]*graph{}}
	for i, v := range Variants {
		p.pkgs[v] = pkgs[i]
	}
	return p, nil
}

// graph returns the call graph of a variant, built on first use.
func (p *Program) graph(variant string) *graph {
	g := p.graphs[variant]
	if g == nil {
		g = newGraph(p.pkgs[variant])
		p.graphs[variant] = g
	}
	return g
}

// shown reports whether a tree lists the functions of the package at
// path: this module's and go-zookeeper's.
func shown(path string) bool {
	return path == Module || strings.HasPrefix(path, Module+"/") || path == ZK
}

// loadErrors joins the errors of the loaded packages and their imports.
func loadErrors(pkgs []*packages.Package) error {
	var errs []error
	packages.Visit(pkgs, nil, func(pkg *packages.Package) {
		for _, e := range pkg.Errors {
			errs = append(errs, e)
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("load the variants: %w", errors.Join(errs...))
	}
	return nil
}
