package callpath

import (
	"fmt"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
)

// NameError is a spec that names no variant, or nothing in its variant.
// Its message lists what there is.
type NameError struct{ msg string }

func (e *NameError) Error() string { return e.msg }

// CheckVariant checks spec's variant, which needs no loading.
func CheckVariant(spec string) error {
	variant, _, _ := strings.Cut(spec, ".")
	if !slices.Contains(Variants, variant) {
		return &NameError{fmt.Sprintf("unknown variant %q in %q; the variants are %s",
			variant, spec, strings.Join(Variants, ", "))}
	}
	return nil
}

// split cuts spec, VARIANT.Type.Method or VARIANT.Func, at its variant.
func (p *Program) split(spec string) (variant, name string, err error) {
	if err := CheckVariant(spec); err != nil {
		return "", "", err
	}
	variant, name, _ = strings.Cut(spec, ".")
	return variant, name, nil
}

// lookup finds the function that name, Type.Method or Func, names in
// pkg. A name that names nothing is an error that lists what there is.
func (g *graph) lookup(pkg *packages.Package, name string) (*ssa.Function, error) {
	if fn := g.member(pkg, name); fn != nil {
		return fn, nil
	}
	return nil, &NameError{fmt.Sprintf("%s has no function or method %q; it has %s",
		pkg.Name, name, strings.Join(Members(pkg), ", "))}
}

// member returns the declared function that name, Type.Method or Func,
// names in pkg, or nil.
func (g *graph) member(pkg *packages.Package, name string) *ssa.Function {
	typeName, method, isMethod := strings.Cut(name, ".")
	obj := pkg.Types.Scope().Lookup(typeName)
	if !isMethod {
		if f, ok := obj.(*types.Func); ok {
			return g.prog.FuncValue(f)
		}
		return nil
	}
	tn, ok := obj.(*types.TypeName)
	if !ok || types.IsInterface(tn.Type()) {
		return nil
	}
	// The pointer's method set has every method, a promoted one too; its
	// declaration is the function, not the promotion's wrapper.
	sel := types.NewMethodSet(types.NewPointer(tn.Type())).Lookup(pkg.Types, method)
	if sel == nil {
		return nil
	}
	return g.prog.FuncValue(sel.Obj().(*types.Func))
}

// Members lists what a spec can name in pkg: its exported functions and
// the exported methods of its exported types, sorted.
func Members(pkg *packages.Package) []string {
	var out []string
	scope := pkg.Types.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Func:
			out = append(out, name)
		case *types.TypeName:
			if types.IsInterface(obj.Type()) {
				continue
			}
			ms := types.NewMethodSet(types.NewPointer(obj.Type()))
			for sel := range ms.Methods() {
				if sel.Obj().Exported() {
					out = append(out, name+"."+sel.Obj().Name())
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
