package callpath

import (
	"fmt"
	"go/types"
	"io"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Func is one function of a tree.
type Func struct {
	Name  string // pkg.Func or pkg.Type.Method, as the docs write it
	Pkg   string // import path
	File  string // slash path from the module root, or module@version/... outside it
	Line  int    // of the func keyword
	Lines int    // from the func keyword to the closing brace
}

// Node is one line of a tree.
type Node struct {
	Func     *Func
	Depth    int
	Literal  bool // a call of a func literal declared in Func: a reference
	Seen     bool // a later call of Func: a reference
	Children []*Node
}

// Tree is the static call tree of one method, down to the first frame
// into go-zookeeper.
type Tree struct {
	Root  *Node
	Funcs []*Func // each function once, in the order listed
}

// Totals counts each function of the tree once: its lines, the files
// they are in, and the functions.
func (t *Tree) Totals() (lines, files, funcs int) {
	seen := map[string]bool{}
	for _, f := range t.Funcs {
		lines += f.Lines
		if !seen[f.File] {
			seen[f.File] = true
			files++
		}
	}
	return lines, files, len(t.Funcs)
}

// Walk calls visit for each node, depth first, in the order listed.
func (t *Tree) Walk(visit func(*Node)) {
	var walk func(*Node)
	walk = func(n *Node) {
		visit(n)
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(t.Root)
}

// Write prints the tree, a function a line indented by its depth, and a
// last line of totals.
func (t *Tree) Write(w io.Writer) error {
	var err error
	t.Walk(func(n *Node) {
		if err == nil {
			_, err = fmt.Fprintln(w, n.String())
		}
	})
	if err != nil {
		return err
	}
	lines, files, funcs := t.Totals()
	_, err = fmt.Fprintf(w, "total: %d lines, %d files, %d functions\n", lines, files, funcs)
	return err
}

// String is the node's line, without its children.
func (n *Node) String() string {
	s := strings.Repeat("  ", n.Depth) + n.Func.Name
	switch {
	case n.Literal:
		return s + " (func literal)"
	case n.Seen:
		return s + " (seen)"
	}
	return fmt.Sprintf("%s  %s:%d  %d lines", s, n.Func.File, n.Func.Line, n.Func.Lines)
}

// Tree returns the call tree of spec, VARIANT.Type.Method or
// VARIANT.Func, such as sequential.Mutex.Lock.
func (p *Program) Tree(spec string) (*Tree, error) {
	variant, name, err := p.split(spec)
	if err != nil {
		return nil, err
	}
	g := p.graph(variant)
	fn, err := g.lookup(p.pkgs[variant], name)
	if err != nil {
		return nil, err
	}
	b := &builder{g: g, reached: g.reach(fn), funcs: map[*ssa.Function]*Func{}, tree: &Tree{}}
	b.tree.Root = b.node(fn, 0, false)
	return b.tree, nil
}

// builder grows one tree, depth first.
type builder struct {
	g       *graph
	reached map[*ssa.Function]bool
	funcs   map[*ssa.Function]*Func // listed so far
	tree    *Tree
}

// node lists fn at depth, with what it calls, the first time it is
// called; later, and when a call of a literal of it comes first, it is a
// reference: every reached function is listed in full where it is called
// by name, as reach found it.
func (b *builder) node(fn *ssa.Function, depth int, literal bool) *Node {
	if f := b.funcs[fn]; f != nil || literal {
		if f == nil {
			f = b.g.describe(fn)
		}
		return &Node{Func: f, Depth: depth, Literal: literal, Seen: !literal}
	}
	n := &Node{Func: b.g.describe(fn), Depth: depth}
	b.funcs[fn] = n.Func
	b.tree.Funcs = append(b.tree.Funcs, n.Func)
	if n.Func.Pkg == ZK {
		return n // the first frame into go-zookeeper ends the branch
	}
	for _, c := range b.g.callees(fn) {
		if b.reached[c.fn] {
			n.Children = append(n.Children, b.node(c.fn, depth+1, c.literal))
		}
	}
	return n
}

// describe names fn and finds its source.
func (g *graph) describe(fn *ssa.Function) *Func {
	f := &Func{Pkg: fn.Pkg.Pkg.Path(), Name: fn.Pkg.Pkg.Name() + "." + fn.Name()}
	if recv := recvName(fn); recv != "" {
		f.Name = fn.Pkg.Pkg.Name() + "." + recv + "." + fn.Name()
	}
	if syn := fn.Syntax(); syn != nil {
		start, end := g.prog.Fset.Position(syn.Pos()), g.prog.Fset.Position(syn.End())
		f.File, f.Line, f.Lines = g.relFile(f.Pkg, start.Filename), start.Line, end.Line-start.Line+1
	}
	return f
}

// recvName is the name of fn's receiver type, without a pointer or type
// arguments; "" for a function.
func recvName(fn *ssa.Function) string {
	recv := fn.Signature.Recv()
	if recv == nil {
		return ""
	}
	t := recv.Type()
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	if named, ok := t.(*types.Named); ok {
		return named.Obj().Name()
	}
	return t.String()
}

// relFile shortens the name of a file of the package at pkgPath: from
// the module root for this module, module@version/... for another.
func (g *graph) relFile(pkgPath, file string) string {
	mod := g.mods[pkgPath]
	if mod == nil {
		return filepath.ToSlash(file)
	}
	rel, err := filepath.Rel(mod.Dir, file)
	if err != nil {
		return filepath.ToSlash(file)
	}
	if mod.Main {
		return filepath.ToSlash(rel)
	}
	return mod.Path + "@" + mod.Version + "/" + filepath.ToSlash(rel)
}
