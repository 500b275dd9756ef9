package docscheck

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/zklocks/zklocks/internal/callpath"
)

// A variant's doc.go walks through the code of a call in its "# Through
// the code" section, a table after the sentence that names the call:
//
//	// A Lock call goes:
//	//
//	//	Mutex.Lock             sequential/mutex.go      prefixes errors
//	//	lockq.Slot.Take        internal/lockq/slot.go   idle -> acquiring -> held, the log
//
// Each row names functions (a bare name after a Type.Name is Type's too:
// "Mutex.reenter, move") or a type whose methods are meant ("lockq.Queue",
// with a directory for file), then their file. The check holds every row
// to the call tree that zklocks path prints for the call: each function
// must be on it, in that file, so the table can not drift from the code.
// The trees are built from the module's source with the go command
// (package internal/callpath), in about two seconds.

const pathSection = "// # Through the code"

// pathTable is one table of a section: the calls it walks through, as
// zklocks path names them (sequential.Mutex.Lock), and its rows.
type pathTable struct {
	line  int // of the table's first row
	roots []string
	rows  []pathRow
}

// pathRow is one row: its names and the file (or directory) they are in.
type pathRow struct {
	line  int // 1-based, in doc.go
	names []pathName
	file  string
}

// pathName is a name as a row writes it, with the type of the name before
// it in the row, for a bare method name.
type pathName struct{ text, typ string }

// callSentence names the calls a table is of: "A Lock call goes:", "A
// Lock or RLock call goes:", "An Observe call goes:".
var callSentence = regexp.MustCompile(`\bAn? ([A-Z]\w*)(?: or ([A-Z]\w*))? call\b`)

// checkPathTables checks the tables of every variant; only in this
// module (a test's module in miniature has none).
func (c *checker) checkPathTables() ([]Problem, error) {
	b, err := os.ReadFile(filepath.Join(c.root, "go.mod"))
	if err != nil || !strings.Contains(string(b), "module "+callpath.Module+"\n") {
		return nil, nil
	}
	prog, err := callpath.Load(c.root)
	if err != nil {
		return nil, fmt.Errorf("the call trees of the variants: %w", err)
	}
	var probs []Problem
	for _, v := range callpath.Variants {
		rel := v + "/doc.go"
		src, err := os.ReadFile(filepath.Join(c.root, v, "doc.go"))
		if err != nil {
			return nil, err
		}
		tables, parseProbs := parsePathTables(rel, v, string(src))
		probs = append(probs, parseProbs...)
		for _, t := range tables {
			funcs, err := treeFuncs(prog, t.roots)
			if err != nil {
				probs = append(probs, Problem{rel, t.line, err.Error()})
				continue
			}
			probs = append(probs, checkPathTable(rel, v, t, funcs)...)
		}
	}
	return probs, nil
}

// treeFuncs returns the functions on the trees of roots.
func treeFuncs(prog *callpath.Program, roots []string) ([]*callpath.Func, error) {
	var funcs []*callpath.Func
	for _, r := range roots {
		t, err := prog.Tree(r)
		if err != nil {
			return nil, err
		}
		funcs = append(funcs, t.Funcs...)
	}
	return funcs, nil
}

// parsePathTables finds the tables of the "# Through the code" section of
// src, the doc.go of variant, at rel.
func parsePathTables(rel, variant, src string) ([]pathTable, []Problem) {
	lines := strings.Split(src, "\n")
	start := slices.Index(lines, pathSection)
	if start < 0 {
		return nil, []Problem{{rel, 1, "no " + strings.TrimPrefix(pathSection, "// ") + " section"}}
	}
	var tables []pathTable
	var probs []Problem
	var prose strings.Builder // since the last table
	for i := start + 1; i < len(lines) && isSectionLine(lines[i]); i++ {
		if !strings.HasPrefix(lines[i], "//\t") {
			prose.WriteString(strings.TrimPrefix(lines[i], "//") + " ")
			continue
		}
		t := pathTable{line: i + 1}
		for ; i < len(lines) && strings.HasPrefix(lines[i], "//\t"); i++ {
			if row, ok := parsePathRow(lines[i], i+1); ok {
				t.rows = append(t.rows, row)
			}
		}
		i-- // the loop's i++ moves to the line after the table
		t.roots = tableRoots(variant, prose.String(), t.rows)
		if t.roots == nil {
			probs = append(probs, Problem{rel, t.line, `no "A Lock call goes:" (or another method's call) before the table, or no Type.Method in its first row`})
		} else {
			tables = append(tables, t)
		}
		prose.Reset()
	}
	return tables, probs
}

// isSectionLine reports whether line is still in the section: a comment
// line before the next heading.
func isSectionLine(line string) bool {
	return strings.HasPrefix(line, "//") && !strings.HasPrefix(line, "// # ")
}

// parsePathRow reads "//\tNames  file  what they do"; a line whose first
// column is blank continues the row above and names nothing.
var columns = regexp.MustCompile(`\s{2,}`)

func parsePathRow(line string, n int) (pathRow, bool) {
	text := strings.TrimPrefix(line, "//\t")
	if text == "" || text[0] == ' ' || text[0] == '\t' {
		return pathRow{}, false
	}
	cols := columns.Split(strings.TrimSpace(text), 3)
	if len(cols) < 2 {
		return pathRow{}, false
	}
	row := pathRow{line: n, file: cols[1]}
	typ := ""
	for _, name := range strings.Split(cols[0], ", ") {
		if i := strings.LastIndex(name, "."); i >= 0 {
			typ = name[:i]
		}
		row.names = append(row.names, pathName{text: name, typ: typ})
	}
	return row, true
}

// tableRoots returns the calls a table is of: the methods that the last
// call sentence before it names, of the type of its first row's first
// name (Mutex in "Mutex.Lock, LockTimeout").
func tableRoots(variant, prose string, rows []pathRow) []string {
	m := callSentence.FindAllStringSubmatch(prose, -1)
	if m == nil || len(rows) == 0 || !strings.Contains(rows[0].names[0].text, ".") {
		return nil
	}
	last := m[len(m)-1]
	typ := rows[0].names[0].typ
	var roots []string
	for _, method := range last[1:] {
		if method != "" {
			roots = append(roots, variant+"."+typ+"."+method)
		}
	}
	return roots
}

// checkPathTable holds each row of t to funcs, the functions on its
// calls' trees.
func checkPathTable(rel, variant string, t pathTable, funcs []*callpath.Func) []Problem {
	var probs []Problem
	for _, row := range t.rows {
		if strings.ContainsAny(row.file, " \t") {
			probs = append(probs, Problem{rel, row.line, fmt.Sprintf("%q is not a file: two spaces or more separate the names, the file and the rest", row.file)})
			continue
		}
		for _, name := range row.names {
			if msg := checkPathName(variant, name, row.file, funcs); msg != "" {
				probs = append(probs, Problem{rel, row.line, fmt.Sprintf("%s (see zklocks path %s)", msg, strings.Join(t.roots, ", "))})
			}
		}
	}
	return probs
}

// checkPathName says what is wrong with one name of a row, or "". A name
// is a function of funcs, the variant's own or package-qualified, or
// failing that a type, whose methods on the tree must include one in file.
func checkPathName(variant string, name pathName, file string, funcs []*callpath.Func) string {
	cands := []string{variant + "." + name.text, name.text}
	if !strings.Contains(name.text, ".") && name.typ != "" {
		cands = append(cands, variant+"."+name.typ+"."+name.text, name.typ+"."+name.text)
	}
	var exact, methods []*callpath.Func
	for _, f := range funcs {
		for _, c := range cands {
			if f.Name == c {
				exact = append(exact, f)
			} else if strings.HasPrefix(f.Name, c+".") {
				methods = append(methods, f)
			}
		}
	}
	found := exact
	if len(found) == 0 {
		found = methods
	}
	if len(found) == 0 {
		return fmt.Sprintf("%s is not on the call tree", name.text)
	}
	for _, f := range found {
		if f.File == file || strings.HasPrefix(f.File, file+"/") && path.Ext(file) == "" {
			return ""
		}
	}
	return fmt.Sprintf("%s is in %s, not %s", name.text, found[0].File, file)
}
