package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A code span that is a Go test name (TestXxx, BenchmarkXxx, ExampleXxx,
// FuzzXxx; for a sub-test path like TestConformance/NoGoroutineLeak, its
// top-level function) must be a function in a _test.go file of the module.
// In a `go test` command inside a code block, each test name must match the
// start of a test function in one of the packages the command names, and
// every ./package it names must exist. A code span of the form pkg.Name or
// pkg.Type.Member, where pkg is the name of a package of this module, must
// name a declaration of that package (a member is a method, a struct field
// or an interface method).

// indexGo learns the module's package names and its test functions.
func (c *checker) indexGo() error {
	return filepath.WalkDir(c.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != c.root && skipDir(e.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(e.Name(), ".go") {
			return nil
		}
		rel, err := filepath.Rel(c.root, p)
		if err != nil {
			return err
		}
		dir := path.Dir(filepath.ToSlash(rel))
		if !strings.HasSuffix(e.Name(), "_test.go") {
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly)
			if err != nil {
				return err
			}
			if name := f.Name.Name; !slices.Contains(c.pkgs[name], dir) {
				c.pkgs[name] = append(c.pkgs[name], dir)
			}
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				if c.tests[fn.Name.Name] == nil {
					c.tests[fn.Name.Name] = map[string]struct{}{}
				}
				c.tests[fn.Name.Name][dir] = struct{}{}
			}
		}
		return nil
	})
}

var (
	testNameRE   = regexp.MustCompile(`^((?:Test|Benchmark|Example|Fuzz)[A-Z0-9_]\w*)(?:/\S*)?$`)
	testInCmdRE  = regexp.MustCompile(`\b(?:Test|Benchmark|Example|Fuzz)[A-Z0-9_]\w*`)
	qualifiedRE  = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?(?:\(\))?$`)
	goCommandRE  = regexp.MustCompile(`\bgo (?:test|run|build|vet)\b`)
	fileSuffixes = map[string]bool{"go": true, "md": true, "txt": true, "json": true, "svg": true, "sh": true,
		"yml": true, "yaml": true, "mod": true, "sum": true, "out": true, "test": true, "log": true}
)

func (c *checker) checkNames(d *doc) []Problem {
	var probs []Problem
	for _, s := range d.spans {
		if m := testNameRE.FindStringSubmatch(s.text); m != nil && !strings.HasSuffix(m[1], "Xxx") {
			if _, ok := c.tests[m[1]]; !ok {
				probs = append(probs, d.problem(s.line, "`%s`: no test function %s in any _test.go file (renamed?)", s.text, m[1]))
			}
			continue
		}
		if msg := c.checkQualified(s.text); msg != "" {
			probs = append(probs, d.problem(s.line, "`%s`: %s", s.text, msg))
		}
	}
	for _, f := range d.fences {
		if f.info == "go" || f.info == "mermaid" {
			continue
		}
		for i, l := range d.body(f) {
			if goCommandRE.MatchString(l) {
				for _, msg := range c.checkCommand(l) {
					probs = append(probs, d.problem(f.open+1+i, "%s", msg))
				}
			}
		}
	}
	return probs
}

// checkQualified checks a code span of the form pkg.Name or pkg.T.Member,
// when pkg is a package of this module; it returns what is wrong, or "".
func (c *checker) checkQualified(s string) string {
	m := qualifiedRE.FindStringSubmatch(s)
	if m == nil || m[1] == "main" || (m[3] == "" && fileSuffixes[m[2]]) {
		return ""
	}
	dirs, ok := c.pkgs[m[1]]
	if !ok {
		return "" // not ours (the standard library, go-zookeeper, ...)
	}
	for _, dir := range dirs {
		idx, err := c.pkgIndex(dir)
		if err != nil {
			return err.Error()
		}
		if !idx.names[m[2]] {
			continue
		}
		if m[3] == "" || idx.members[m[2]][m[3]] {
			return ""
		}
		return "package " + m[1] + " (" + dir + "): " + m[2] + " has no method or field " + m[3]
	}
	return "package " + m[1] + " (" + strings.Join(dirs, ", ") + ") declares no " + m[2]
}

// pkgDecls is what one package declares at top level, and the members
// (methods, struct fields, interface methods) of its types.
type pkgDecls struct {
	names   map[string]bool
	members map[string]map[string]bool
}

func (c *checker) pkgIndex(dir string) (*pkgDecls, error) {
	if c.decls == nil {
		c.decls = map[string]*pkgDecls{}
	}
	if idx, ok := c.decls[dir]; ok {
		return idx, nil
	}
	idx := &pkgDecls{names: map[string]bool{}, members: map[string]map[string]bool{}}
	member := func(t, name string) {
		if idx.members[t] == nil {
			idx.members[t] = map[string]bool{}
		}
		idx.members[t][name] = true
	}
	ents, err := os.ReadDir(filepath.Join(c.root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		g, err := c.goFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, d := range g.ast.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if r := recvName(d); r != "" {
					member(r, d.Name.Name)
				} else {
					idx.names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							idx.names[n.Name] = true
						}
					case *ast.TypeSpec:
						idx.names[s.Name.Name] = true
						for _, f := range fieldsOf(s.Type) {
							member(s.Name.Name, f)
						}
					}
				}
			}
		}
	}
	c.decls[dir] = idx
	return idx, nil
}

// fieldsOf returns the field names of a struct type, or the method names
// of an interface type (embedded ones by their type's name).
func fieldsOf(t ast.Expr) []string {
	var list *ast.FieldList
	switch t := t.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	}
	if list == nil {
		return nil
	}
	var out []string
	for _, f := range list.List {
		for _, n := range f.Names {
			out = append(out, n.Name)
		}
		if len(f.Names) == 0 { // embedded
			x := f.Type
			if s, ok := x.(*ast.StarExpr); ok {
				x = s.X
			}
			switch x := x.(type) {
			case *ast.Ident:
				out = append(out, x.Name)
			case *ast.SelectorExpr:
				out = append(out, x.Sel.Name)
			}
		}
	}
	return out
}

// checkCommand checks a go command line of a code block: the ./packages
// it names exist, and each test name in it is the start of a test
// function of one of them.
func (c *checker) checkCommand(line string) []string {
	var msgs []string
	var dirs []string
	anyPkg := false
	for _, w := range strings.Fields(line) {
		w = strings.Trim(w, `'"`)
		if w != "." && !strings.HasPrefix(w, "./") {
			continue
		}
		dir := path.Clean(strings.TrimSuffix(w, "..."))
		if strings.HasSuffix(w, "...") {
			anyPkg = true
		}
		if fi, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(dir))); err != nil || !fi.IsDir() {
			msgs = append(msgs, "command names "+w+", which is not a directory of the module")
			continue
		}
		dirs = append(dirs, dir)
	}
	if len(dirs) == 0 {
		anyPkg = true
	}
	if !strings.Contains(line, "go test") {
		return msgs
	}
	for _, name := range testInCmdRE.FindAllString(line, -1) {
		if !c.hasTest(name, dirs, anyPkg) {
			where := "the module"
			if !anyPkg {
				where = strings.Join(dirs, ", ")
			}
			msgs = append(msgs, "command runs "+name+", but no test function in "+where+" starts with it (renamed?)")
		}
	}
	return msgs
}

func (c *checker) hasTest(prefix string, dirs []string, anyPkg bool) bool {
	for name, in := range c.tests {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if anyPkg {
			return true
		}
		for _, d := range dirs {
			if _, ok := in[d]; ok {
				return true
			}
		}
	}
	return false
}
