package docscheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Problem is one thing in a Markdown file that does not match the source.
type Problem struct {
	File string // slash path from the root
	Line int    // 1-based
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// Check checks every Markdown file under root, the module root, and
// changes nothing. The error is for files it could not read.
func Check(root string) ([]Problem, error) {
	_, probs, err := run(root, false)
	return probs, err
}

// Update rewrites every quote and every line reference under root from the
// current source, then checks as Check does. It returns the files it
// rewrote and what is still wrong (what it can not fix: a declaration that
// is gone, a broken link, ...).
func Update(root string) (updated []string, probs []Problem, err error) {
	return run(root, true)
}

func run(root string, fix bool) ([]string, []Problem, error) {
	c, err := newChecker(root)
	if err != nil {
		return nil, nil, err
	}
	files, err := markdownFiles(root)
	if err != nil {
		return nil, nil, err
	}
	var updated []string
	var probs []Problem
	for _, rel := range files {
		d, err := c.load(rel)
		if err != nil {
			return nil, nil, err
		}
		if fix {
			before := d.text()
			c.fixQuotes(d)
			c.fixLineLinks(d)
			if after := d.text(); after != before {
				if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), []byte(after), 0o644); err != nil {
					return nil, nil, err
				}
				updated = append(updated, rel)
			}
		}
		probs = append(probs, c.check(d)...)
	}
	pathProbs, err := c.checkPathTables()
	if err != nil {
		return nil, nil, err
	}
	return updated, append(probs, pathProbs...), nil
}

// check runs every check on one file.
func (c *checker) check(d *doc) []Problem {
	var probs []Problem
	probs = append(probs, d.fenceProblems...)
	probs = append(probs, c.checkQuotes(d)...)
	probs = append(probs, c.checkLinks(d)...)
	probs = append(probs, c.checkNames(d)...)
	probs = append(probs, checkMermaid(d)...)
	probs = append(probs, checkLessonLength(d)...)
	probs = append(probs, c.checkZh(d)...)
	probs = append(probs, c.checkLedger(d)...)
	probs = append(probs, c.checkHourPath(d)...)
	slices.SortStableFunc(probs, func(a, b Problem) int { return a.Line - b.Line })
	return probs
}

// skipDir reports whether a directory holds nothing of the module's docs:
// version control, test fixtures, hidden and tool directories.
func skipDir(name string) bool {
	return name == "testdata" || name == "vendor" || name == "node_modules" ||
		(len(name) > 1 && (name[0] == '.' || name[0] == '_'))
}

// markdownFiles lists the .md files under root, as slash paths from it.
func markdownFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != root && skipDir(e.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(e.Name(), ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// checker holds what the checks learn about the module: its Go files,
// parsed on demand, and its test functions.
type checker struct {
	root  string
	gos   map[string]*goFile             // by slash path from root
	pkgs  map[string][]string            // package name -> dirs (slash, from root)
	tests map[string]map[string]struct{} // test function -> dirs of its package
	mds   map[string]*doc                // Markdown files, for heading anchors
	decls map[string]*pkgDecls           // by package directory, on demand
}

func newChecker(root string) (*checker, error) {
	c := &checker{root: root, gos: map[string]*goFile{}, pkgs: map[string][]string{},
		tests: map[string]map[string]struct{}{}, mds: map[string]*doc{}}
	if err := c.indexGo(); err != nil {
		return nil, err
	}
	return c, nil
}

// load reads a Markdown file (once; a fixed file is the same *doc).
func (c *checker) load(rel string) (*doc, error) {
	if d, ok := c.mds[rel]; ok {
		return d, nil
	}
	b, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	d := parseDoc(rel, string(b))
	c.mds[rel] = d
	return d, nil
}
