package docscheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The hardening ledger, docs/hardening.md, has a table with one row per
// conformance case the textbook lock fails: the case, what goes wrong, a
// peer library's bug report, the hardening of this module that fixes it
// and the test that pins the fix. Its rows must stay true as the code
// moves, so:
//
//   - the cases in the "case" column are exactly the keys of the
//     textbook variant's Expected map (ledgerCases), the list the
//     conformance suite holds the textbook lock to;
//   - in the "hardening" and "pinned by" columns, a code span that ends
//     in .go is a file of the module, and every other code span names a
//     declaration in the last file named before it in that cell, written
//     as in a quote marker (Name, T.Name, (*T).Name); in "pinned by" the
//     names are test functions in _test.go files, with a subtest path
//     allowed after the function (TestConformance/DoneOnLoss);
//   - each row names at least one file and one function in "hardening",
//     and one test in "pinned by".

const (
	ledgerDoc   = "docs/hardening.md"
	ledgerCases = "textbook/mutex_test.go" // its Expected map lists the cases
)

// ledgerColumns are the columns the checks read, by their header.
var ledgerColumns = []string{"case", "hardening", "pinned by"}

func (c *checker) checkLedger(d *doc) []Problem {
	if d.path != ledgerDoc {
		return nil
	}
	var probs []Problem
	expected, err := c.expectedCases()
	if err != nil {
		probs = append(probs, d.problem(0, "the ledger's cases: %v", err))
	}
	header, rows := d.table()
	if header < 0 {
		return append(probs, d.problem(0, "no table: want one with the columns %s", strings.Join(ledgerColumns, ", ")))
	}
	col := map[string]int{}
	for i, h := range splitRow(d.lines[header]) {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	for _, name := range ledgerColumns {
		if _, ok := col[name]; !ok {
			return append(probs, d.problem(header, "the ledger's table has no %q column", name))
		}
	}
	listed := map[string]bool{}
	for _, r := range rows {
		cells := splitRow(d.lines[r])
		cell := func(name string) string {
			if i := col[name]; i < len(cells) {
				return cells[i]
			}
			return ""
		}
		cases := spansOf(cell("case"))
		if len(cases) != 1 {
			probs = append(probs, d.problem(r, "want the case as one code span in the case column, got %q", cell("case")))
		}
		for _, cs := range cases {
			if expected != nil && !expected[cs] {
				probs = append(probs, d.problem(r, "row for %s, which the textbook lock is not expected to fail (%s)", cs, ledgerCases))
			}
			listed[cs] = true
		}
		probs = append(probs, c.checkLedgerCell(d, r, "hardening", cell("hardening"), false)...)
		probs = append(probs, c.checkLedgerCell(d, r, "pinned by", cell("pinned by"), true)...)
	}
	var missing []string
	for cs := range expected {
		if !listed[cs] {
			missing = append(missing, cs)
		}
	}
	slices.Sort(missing)
	for _, cs := range missing {
		probs = append(probs, d.problem(header, "the textbook lock is expected to fail %s (%s), but the ledger has no row for it", cs, ledgerCases))
	}
	return probs
}

// checkLedgerCell checks the files and names of one cell of the
// hardening or pinned-by column; tests says the names are tests.
func (c *checker) checkLedgerCell(d *doc, line int, column, cell string, tests bool) []Problem {
	var probs []Problem
	file := ""
	files, names := 0, 0
	for _, s := range spansOf(cell) {
		if strings.HasSuffix(s, ".go") {
			file = ""
			if fi, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(s))); err != nil || fi.IsDir() {
				probs = append(probs, d.problem(line, "%s: `%s` is not a file of the module", column, s))
				continue
			}
			file = s
			files++
			continue
		}
		if file == "" {
			probs = append(probs, d.problem(line, "%s: `%s` follows no file of the module that could declare it", column, s))
			continue
		}
		name := s
		if tests {
			name, _, _ = strings.Cut(s, "/") // the function of a subtest path
			if !strings.HasSuffix(file, "_test.go") || !strings.HasPrefix(name, "Test") {
				probs = append(probs, d.problem(line, "%s: `%s` in %s is not a test function in a _test.go file", column, s, file))
				continue
			}
		}
		spec, err := parseDeclSpec("func", name)
		if err == nil {
			var g *goFile
			if g, err = c.goFile(file); err == nil {
				_, _, err = g.find(spec)
			}
		}
		if err != nil {
			probs = append(probs, d.problem(line, "%s: `%s`: %v", column, s, err))
			continue
		}
		names++
	}
	switch {
	case tests && names == 0:
		probs = append(probs, d.problem(line, "%s: the row names no test that pins the fix", column))
	case !tests && (files == 0 || names == 0):
		probs = append(probs, d.problem(line, "%s: the row names no file and function that fix it", column))
	}
	return probs
}

// expectedCases reads the keys of the Expected map in ledgerCases: the
// cases the textbook lock must fail.
func (c *checker) expectedCases() (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(c.root, filepath.FromSlash(ledgerCases)), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out map[string]bool
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		if id, ok := kv.Key.(*ast.Ident); !ok || id.Name != "Expected" {
			return true
		}
		lit, ok := kv.Value.(*ast.CompositeLit)
		if !ok {
			return true
		}
		out = map[string]bool{}
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if k, err := stringLit(kv.Key); err == nil {
				out[k] = true
			}
		}
		return false
	})
	if out == nil {
		return nil, fmt.Errorf("%s has no Expected map", ledgerCases)
	}
	return out, nil
}

func stringLit(e ast.Expr) (string, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", strconv.ErrSyntax
	}
	return strconv.Unquote(lit.Value)
}

// table finds the first table outside fenced blocks: the line of its
// header and those of its rows (the delimiter row left out); header is
// -1 when there is none.
func (d *doc) table() (header int, rows []int) {
	header = -1
	for i := 0; i+1 < len(d.lines); i++ {
		if d.inFence[i] || !isRow(d.lines[i]) || !isDelimiterRow(d.lines[i+1]) {
			continue
		}
		header = i
		for j := i + 2; j < len(d.lines) && !d.inFence[j] && isRow(d.lines[j]); j++ {
			rows = append(rows, j)
		}
		return header, rows
	}
	return -1, nil
}

func isRow(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "|") }

func isDelimiterRow(l string) bool {
	return isRow(l) && strings.Trim(strings.TrimSpace(l), "|-: ") == ""
}

// splitRow returns a table row's cells (no cell of the ledger holds a
// pipe, escaped or in a code span).
func splitRow(l string) []string {
	l = strings.TrimSpace(l)
	l = strings.TrimSuffix(strings.TrimPrefix(l, "|"), "|")
	return strings.Split(l, "|")
}

// spansOf returns the code spans of one cell, in order.
func spansOf(cell string) []string {
	var out []string
	p := []byte(cell)
	for _, s := range codeSpans(p) {
		out = append(out, normSpan(string(p[s[0]:s[1]])))
	}
	return out
}
