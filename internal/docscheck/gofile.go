package docscheck

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// goFile is a parsed Go source file.
type goFile struct {
	path  string   // slash path from the root
	lines []string // without "\n"
	fset  *token.FileSet
	ast   *ast.File
}

// goFile returns the parsed file at rel (a slash path from the root).
func (c *checker) goFile(rel string) (*goFile, error) {
	if g, ok := c.gos[rel]; ok {
		return g, nil
	}
	b, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, b, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	g := &goFile{path: rel, lines: strings.Split(string(b), "\n"), fset: fset, ast: f}
	c.gos[rel] = g
	return g, nil
}

// declSpec names a declaration as a quote marker or a link text does.
type declSpec struct {
	kind string // "func", "type", "const", "var", or "" for any
	recv string // the receiver's type name, for a method
	name string
	text string // as written: "(*Mutex).await"
}

func (s declSpec) String() string {
	if s.kind != "" {
		return s.kind + " " + s.text
	}
	return s.text
}

var errDeclForm = errors.New("want Name, (*T).Name or T.Name, optionally after func, type, const or var")

// parseDeclSpec reads "Name", "T.Name", "(*T).Name" or "(T).Name", with an
// optional kind keyword before it (as its own word in kind).
func parseDeclSpec(kind, s string) (declSpec, error) {
	spec := declSpec{kind: kind, text: s}
	switch kind {
	case "", "func", "type", "const", "var":
	default:
		return spec, errDeclForm
	}
	if strings.HasPrefix(s, "(") {
		recv, rest, ok := strings.Cut(s[1:], ")")
		if !ok || !strings.HasPrefix(rest, ".") {
			return spec, errDeclForm
		}
		spec.recv, s = strings.TrimPrefix(recv, "*"), rest[1:]
	} else if recv, name, ok := strings.Cut(s, "."); ok {
		spec.recv, s = recv, name
	}
	spec.name = s
	if !isIdent(spec.name) || (spec.recv != "" && !isIdent(spec.recv)) ||
		(spec.recv != "" && kind != "" && kind != "func") {
		return spec, errDeclForm
	}
	return spec, nil
}

func isIdent(s string) bool { return token.IsIdentifier(s) }

// lines is a range of lines of a Go file, 1-based and inclusive.
type lines struct{ from, to int }

func (l lines) anchor() string {
	if l.from == l.to {
		return fmt.Sprintf("L%d", l.from)
	}
	return fmt.Sprintf("L%d-L%d", l.from, l.to)
}

// find returns the lines of the declaration spec names, and those of its
// doc comment (zero when it has none).
func (g *goFile) find(spec declSpec) (decl, doc lines, err error) {
	line := func(p token.Pos) int { return g.fset.Position(p).Line }
	span := func(n ast.Node) lines { return lines{line(n.Pos()), line(n.End())} }
	docOf := func(c *ast.CommentGroup) lines {
		if c == nil {
			return lines{}
		}
		return span(c)
	}
	for _, d := range g.ast.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if (spec.kind == "" || spec.kind == "func") && d.Name.Name == spec.name && recvName(d) == spec.recv {
				return span(d), docOf(d.Doc), nil
			}
		case *ast.GenDecl:
			if spec.recv != "" || (spec.kind != "" && spec.kind != d.Tok.String()) {
				continue
			}
			for _, s := range d.Specs {
				if !specNames(s, spec.name) {
					continue
				}
				if !d.Lparen.IsValid() { // a lone declaration: keyword and all
					return span(d), docOf(d.Doc), nil
				}
				return span(s), docOf(specDoc(s)), nil
			}
		}
	}
	return lines{}, lines{}, fmt.Errorf("%s declares no %s", g.path, spec)
}

// recvName is the type name of a method's receiver, "" for a function.
func recvName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func specNames(s ast.Spec, name string) bool {
	switch s := s.(type) {
	case *ast.TypeSpec:
		return s.Name.Name == name
	case *ast.ValueSpec:
		for _, n := range s.Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}

func specDoc(s ast.Spec) *ast.CommentGroup {
	switch s := s.(type) {
	case *ast.TypeSpec:
		return s.Doc
	case *ast.ValueSpec:
		return s.Doc
	}
	return nil
}

// text returns the lines l of the file, without the indentation they all
// share.
func (g *goFile) text(l lines) []string {
	out := append([]string(nil), g.lines[l.from-1:l.to]...)
	return dedent(out)
}

func dedent(ls []string) []string {
	prefix := ""
	first := true
	for _, l := range ls {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = ind, false
			continue
		}
		for !strings.HasPrefix(ind, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	for i, l := range ls {
		ls[i] = strings.TrimPrefix(l, prefix)
	}
	return ls
}
