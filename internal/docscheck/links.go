package docscheck

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Every relative link or image in every .md file must resolve to a file or
// directory of the module (outside it, a link breaks on GitHub). An anchor
// on a Markdown file must name one of its headings (GitHub's slugs); #Ln
// and #Ln-Lm must lie within the file. A line-anchored link outside a quote
// must point into a Go file and its text must name a declaration there,
// written as in a quote marker (a package qualifier and backticks are
// allowed, as in [`sequential.Mutex.lock`](../sequential/recipe.go#L15-L59));
// its lines must be that declaration's, without the doc comment, and
// -update rewrites them. Line anchors into other files are refused: nothing
// could keep them in step.

var (
	schemeRE     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	lineAnchorRE = regexp.MustCompile(`^L(\d+)(?:-L(\d+))?$`)
)

// resolved is a relative link, resolved against the module.
type resolved struct {
	rel  string // slash path from the root
	frag string // the fragment, without #
	self bool   // a fragment-only link to the same file
}

// resolve resolves a link's target; ok is false for a link out of the
// repository (a URL), which is not checked.
func resolve(docPath, target string) (r resolved, ok bool, err error) {
	if schemeRE.MatchString(target) || strings.HasPrefix(target, "//") {
		return r, false, nil
	}
	p, frag, _ := strings.Cut(target, "#")
	p, _, _ = strings.Cut(p, "?")
	r.frag = frag
	if p == "" {
		r.rel, r.self = docPath, true
		return r, true, nil
	}
	if p, err = url.PathUnescape(p); err != nil {
		return r, true, fmt.Errorf("link %s: %v", target, err)
	}
	if strings.HasPrefix(p, "/") { // GitHub: from the repository's root
		r.rel = path.Clean(p[1:])
	} else {
		r.rel = path.Clean(path.Join(path.Dir(docPath), p))
	}
	if r.rel == ".." || strings.HasPrefix(r.rel, "../") {
		return r, true, fmt.Errorf("link %s leads out of the repository", target)
	}
	return r, true, nil
}

func (c *checker) checkLinks(d *doc) []Problem {
	var probs []Problem
	quoteLinks := quoteLinkLines(d)
	for _, l := range d.links() {
		r, ok, err := resolve(d.path, l.target)
		if !ok {
			continue
		}
		if err != nil {
			probs = append(probs, d.problem(l.line, "%v", err))
			continue
		}
		fi, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(r.rel)))
		if err != nil {
			probs = append(probs, d.problem(l.line, "broken link %s: %s does not exist", l.target, r.rel))
			continue
		}
		if r.frag == "" {
			continue
		}
		m := lineAnchorRE.FindStringSubmatch(r.frag)
		switch {
		case m != nil && fi.IsDir():
			probs = append(probs, d.problem(l.line, "link %s: a line anchor on a directory", l.target))
		case m != nil:
			if p := c.checkLineAnchor(d, l, r, m, quoteLinks[l.line]); p != "" {
				probs = append(probs, d.problem(l.line, "%s", p))
			}
		case strings.HasSuffix(r.rel, ".md"):
			target, err := c.load(r.rel)
			if err != nil {
				probs = append(probs, d.problem(l.line, "link %s: %v", l.target, err))
			} else if !target.anchors()[r.frag] {
				probs = append(probs, d.problem(l.line, "link %s: %s has no heading with the anchor #%s", l.target, r.rel, r.frag))
			}
		default:
			probs = append(probs, d.problem(l.line, "link %s: an anchor that is not a line (#Ln, #Ln-Lm) on a file that is not Markdown", l.target))
		}
	}
	return probs
}

// quoteLinkLines returns the lines of the quotes' line references: the
// links there are the quote's, checked with it.
func quoteLinkLines(d *doc) map[int]bool {
	out := map[int]bool{}
	for _, q := range d.quotes() {
		if q.linkLine >= 0 {
			out[q.linkLine] = true
		}
	}
	return out
}

// checkLineAnchor checks a #Ln or #Ln-Lm link; it returns what is wrong,
// or "".
func (c *checker) checkLineAnchor(d *doc, l link, r resolved, m []string, ofQuote bool) string {
	from, _ := strconv.Atoi(m[1])
	to := from
	if m[2] != "" {
		to, _ = strconv.Atoi(m[2])
	}
	n, err := c.lineCount(r.rel)
	switch {
	case err != nil:
		return fmt.Sprintf("link %s: %v", l.target, err)
	case from < 1 || to < from || to > n:
		return fmt.Sprintf("link %s: lines %d-%d are not within %s (%d lines)", l.target, from, to, r.rel, n)
	case ofQuote:
		return "" // the quote check compares its numbers with the source
	}
	want, err := c.declLines(r.rel, l.text)
	switch {
	case err != nil:
		return fmt.Sprintf("line-anchored link [%s](%s): %v", l.text, l.target, err)
	case want.anchor() != r.frag:
		return fmt.Sprintf("line-anchored link [%s](%s) is stale: the declaration is at #%s; %s",
			l.text, l.target, want.anchor(), fixHint)
	}
	return ""
}

// declLines returns the lines of the declaration that a line-anchored
// link's text names in the Go file rel.
func (c *checker) declLines(rel, text string) (lines, error) {
	if !strings.HasSuffix(rel, ".go") {
		return lines{}, fmt.Errorf("line anchors are only checked in Go files; quote the lines or link the file without them")
	}
	g, err := c.goFile(rel)
	if err != nil {
		return lines{}, err
	}
	name := strings.TrimSuffix(strings.Trim(strings.TrimSpace(text), "`"), "()")
	name = strings.TrimPrefix(name, g.ast.Name.Name+".")
	spec, err := parseDeclSpec("", name)
	if err != nil {
		return lines{}, fmt.Errorf("the link text must name the declaration the lines hold (%v)", err)
	}
	decl, _, err := g.find(spec)
	if err != nil {
		return lines{}, fmt.Errorf("the link text must name the declaration the lines hold: %v", err)
	}
	return decl, nil
}

// fixLineLinks rewrites the line numbers of every line-anchored link
// outside quotes from the declaration its text names.
func (c *checker) fixLineLinks(d *doc) {
	quoteLinks := quoteLinkLines(d)
	ls := slices.Clone(d.lines)
	links := d.links()
	slices.SortFunc(links, func(a, b link) int { return b.start - a.start }) // from the end
	for _, l := range links {
		r, ok, err := resolve(d.path, l.target)
		if !ok || err != nil || !lineAnchorRE.MatchString(r.frag) || quoteLinks[l.line] {
			continue
		}
		want, err := c.declLines(r.rel, l.text)
		if err != nil || want.anchor() == r.frag {
			continue
		}
		p, _, _ := strings.Cut(l.target, "#")
		col := l.start - d.lineStart[l.line]
		line := ls[l.line]
		ls[l.line] = line[:col] + p + "#" + want.anchor() + line[col+len(l.target):]
	}
	d.setLines(ls)
}

// lineCount returns the number of lines of the file rel.
func (c *checker) lineCount(rel string) (int, error) {
	b, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
	if err != nil {
		return 0, err
	}
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n, nil
}
