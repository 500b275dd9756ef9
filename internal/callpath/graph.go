package callpath

import (
	"cmp"
	"go/token"
	"slices"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// graph is one variant in SSA form, with its call graph. It is the
// variant's package and what it imports, alone: in a program of every
// variant, a call through a func value in shared code (lockq.Slot.TakeIf
// calls the lock its caller passes) would reach every variant's.
type graph struct {
	prog  *ssa.Program
	calls *callgraph.Graph
	parts map[*ssa.Function][]*ssa.Function // declared function -> it, its literals, its instances
	mods  map[string]*packages.Module       // by import path, for the packages with bodies
	memo  map[*ssa.Function][]callee        // callees, by caller
}

func newGraph(variant *packages.Package) *graph {
	g := &graph{mods: map[string]*packages.Module{}, memo: map[*ssa.Function][]callee{}}
	// Bodies only for the code a tree lists: the standard library and the
	// other modules stay types, which keeps the build to about a second.
	var ours []*packages.Package
	packages.Visit([]*packages.Package{variant}, nil, func(pkg *packages.Package) {
		if shown(pkg.PkgPath) {
			ours = append(ours, pkg)
			g.mods[pkg.PkgPath] = pkg.Module
		}
	})
	prog, built := ssautil.Packages(ours, ssa.InstantiateGenerics)
	for _, b := range built {
		b.Build()
	}
	g.prog = prog
	g.calls = callGraph(prog)
	g.parts = map[*ssa.Function][]*ssa.Function{}
	for fn := range g.calls.Nodes {
		if fn != nil {
			c := canonical(fn)
			g.parts[c] = append(g.parts[c], fn)
		}
	}
	return g
}

// callGraph resolves the calls of prog. Of x/tools' algorithms, static
// resolves no call through an interface or a func value, and the recipes
// run on both: Slot.Take calls the lock through a func value and its
// queue through the Keeper interface, so static's sequential.Mutex.Lock
// never reaches the recipe. cha resolves an interface call to every
// method of that name and signature in the program, so the sequential
// lock's Slot would also call the naive lock's lockNode,
// and an err.Error() lockerr.Error's. vta (variable type analysis) keeps,
// of cha's answer, the types whose values can flow to the call: the queue
// the Slot was built with, the func passed in. It takes well under a
// second here.
func callGraph(prog *ssa.Program) *callgraph.Graph {
	return vta.CallGraph(ssautil.AllFunctions(prog), nil)
}

// reach returns the functions that root can reach through calls of
// declared functions. A func literal runs only after the function that
// declares it has made it, so a call of a literal counts only when its
// function is reached otherwise: shared code that calls back (zkop's
// retry loop calls the request its caller gives it) would reach every
// caller's literal.
func (g *graph) reach(root *ssa.Function) map[*ssa.Function]bool {
	reached := map[*ssa.Function]bool{root: true}
	for todo := []*ssa.Function{root}; len(todo) > 0; {
		fn := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if fn.Pkg.Pkg.Path() == ZK {
			continue
		}
		for _, c := range g.callees(fn) {
			if !c.literal && !reached[c.fn] {
				reached[c.fn] = true
				todo = append(todo, c.fn)
			}
		}
	}
	return reached
}

// callee is a function that a function calls, as a tree lists it.
type callee struct {
	fn      *ssa.Function
	pos     token.Pos // the first call, to list callees in source order
	literal bool      // only calls of func literals declared in fn
}

// callees returns what fn calls, in the order of the first call of each
// in its source. A func literal is part of the function that declares
// it: its calls are listed under that function, and a call of it (by a
// callback or a goroutine) lists that function. Wrappers that the
// compiler makes (bound methods, promoted methods, instances of generic
// functions) are looked through to the source function they run.
func (g *graph) callees(fn *ssa.Function) []callee {
	if out, ok := g.memo[fn]; ok {
		return out
	}
	byFn := map[*ssa.Function]*callee{}
	for _, part := range g.parts[fn] {
		for _, e := range g.calls.Nodes[part].Out {
			g.lookThrough(e.Callee.Func, func(target *ssa.Function) {
				add(byFn, fn, target, e.Pos())
			}, map[*ssa.Function]bool{})
		}
	}
	out := make([]callee, 0, len(byFn))
	for _, c := range byFn {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b callee) int { return cmp.Compare(a.pos, b.pos) })
	g.memo[fn] = out
	return out
}

// lookThrough calls found with the source function that callee runs:
// callee itself or, for a wrapper, what the wrapper calls.
func (g *graph) lookThrough(callee *ssa.Function, found func(*ssa.Function), seen map[*ssa.Function]bool) {
	if canonical(callee).Synthetic == "" {
		found(callee)
		return
	}
	node := g.calls.Nodes[callee]
	if seen[callee] || node == nil {
		return
	}
	seen[callee] = true
	for _, e := range node.Out {
		g.lookThrough(e.Callee.Func, found, seen)
	}
}

// add records a call from fn to target at pos, when a tree lists target:
// a function of this module or go-zookeeper, other than fn.
func add(byFn map[*ssa.Function]*callee, fn, target *ssa.Function, pos token.Pos) {
	c := canonical(target)
	if c == fn || c.Pkg == nil || !shown(c.Pkg.Pkg.Path()) {
		return
	}
	literal := target.Parent() != nil
	prev := byFn[c]
	if prev == nil {
		byFn[c] = &callee{fn: c, pos: pos, literal: literal}
		return
	}
	if pos.IsValid() && (!prev.pos.IsValid() || pos < prev.pos) {
		prev.pos = pos
	}
	prev.literal = prev.literal && literal
}

// canonical is the declared function whose source fn is: the outermost
// function around a func literal, the generic function of an instance.
func canonical(fn *ssa.Function) *ssa.Function {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	if o := fn.Origin(); o != nil {
		fn = o
	}
	return fn
}
