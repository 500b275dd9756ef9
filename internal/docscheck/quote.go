package docscheck

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A quote is a ```go block preceded by a marker that names a file (from
// the module root) and a declaration in it, and followed by a link to the
// lines it shows:
//
//	<!-- quote: internal/lockq/queue.go func (*Queue).Head -->
//	```go
//	func (q *Queue) Head(ctx context.Context) (string, error) {
//	...
//	```
//	[internal/lockq/queue.go#L74-L92](../internal/lockq/queue.go#L74-L92)
//
// The declaration is written as in a method expression: Name for a
// function, type, constant or variable (a keyword func, type, const or var
// may precede it), (*T).Name or T.Name for a method of T, whichever its
// receiver. The block is the declaration's source, from its first keyword
// to its end, without the doc comment: the prose around a quote says what
// the doc comment says, and the quote stays short. Two modifiers, after
// the name:
//
//	doc                  include the doc comment
//	from "A" to "B"      only the lines from the first one containing A to
//	                     the next one containing B (both included), inside
//	                     the declaration; for a long function whose heart
//	                     is a few lines. Common indentation is removed.
//	                     A and B are Go string literals ("a \"b\"").
//
// Quotes elide nothing: a block is one contiguous run of source lines, so
// -update can always rewrite it. The check compares the block with the
// source byte for byte (tabs included) and the link's line numbers with the
// lines the block came from; a difference fails with a diff and the fix.

// fixHint ends every message about code that drifted.
const fixHint = "run `go test ./internal/docscheck -update` to rewrite it from the source, then read the prose around it again"

var (
	markerRE       = regexp.MustCompile(`^\s*<!--\s*quote:\s*(.*?)\s*-->\s*$`)
	markerStartRE  = regexp.MustCompile(`^\s*<!--\s*quote\b`)
	leadingLinkRE  = regexp.MustCompile(`^\s*\[([^\]]*)\]\(([^)\s]*)\)`)
	markerKeywords = map[string]bool{"func": true, "type": true, "const": true, "var": true}
)

// quote is one quote marker and what follows it.
type quote struct {
	marker  int // line index of the marker
	file    string
	spec    declSpec
	withDoc bool
	from    string // with to: a range of lines inside the declaration
	to      string

	block    fence
	linkLine int // line index of the line reference, -1 when there is none
	linkEnd  int // end of the link on that line
	err      error
}

// quotes returns the file's quote markers; err is set in those it could
// not read.
func (d *doc) quotes() []quote {
	var qs []quote
	for i, l := range d.lines {
		if !d.inFence[i] && markerStartRE.MatchString(l) {
			qs = append(qs, d.readQuote(i))
		}
	}
	return qs
}

func (d *doc) readQuote(i int) quote {
	q := quote{marker: i, linkLine: -1}
	// The block and the line reference first: they are the quote's even
	// when the marker is wrong.
	j := nextNonBlank(d.lines, i+1)
	k := slices.IndexFunc(d.fences, func(f fence) bool { return f.open == j })
	if k < 0 || d.fences[k].info != "go" {
		q.err = errors.New("a quote marker must be followed by a ```go block: the next line must open one")
		return q
	}
	q.block = d.fences[k]
	if l := nextNonBlank(d.lines, q.block.close+1); l < len(d.lines) && !d.inFence[l] {
		if lm := leadingLinkRE.FindStringSubmatchIndex(d.lines[l]); lm != nil && strings.Contains(d.lines[l][lm[4]:lm[5]], "#L") {
			q.linkLine, q.linkEnd = l, lm[1]
		}
	}
	q.err = q.parseMarker(d.lines[i])
	return q
}

// parseMarker reads the marker line into q.
func (q *quote) parseMarker(line string) error {
	const form = `want <!-- quote: FILE [func|type|const|var] DECL [doc] [from "A" to "B"] --> alone on its line`
	m := markerRE.FindStringSubmatch(line)
	if m == nil {
		return fmt.Errorf("malformed quote marker: %s", form)
	}
	words, err := splitWords(m[1])
	if err != nil || len(words) < 2 {
		return fmt.Errorf("malformed quote marker %q: %s", m[1], form)
	}
	q.file, words = path.Clean(words[0]), words[1:]
	kind := ""
	if markerKeywords[words[0]] && len(words) > 1 {
		kind, words = words[0], words[1:]
	}
	if q.spec, err = parseDeclSpec(kind, words[0]); err != nil {
		return fmt.Errorf("malformed quote marker: %q: %v", words[0], err)
	}
	for rest := words[1:]; len(rest) > 0; {
		switch {
		case rest[0] == "doc":
			q.withDoc, rest = true, rest[1:]
		case rest[0] == "from" && len(rest) >= 4 && rest[2] == "to":
			q.from, q.to, rest = rest[1], rest[3], rest[4:]
		default:
			return fmt.Errorf("malformed quote marker: unknown %q: want doc, or from \"A\" to \"B\"", strings.Join(rest, " "))
		}
	}
	if q.withDoc && q.from != "" {
		return errors.New("malformed quote marker: doc and from/to do not go together")
	}
	return nil
}

func nextNonBlank(ls []string, i int) int {
	for i < len(ls) && strings.TrimSpace(ls[i]) == "" {
		i++
	}
	return i
}

// splitWords splits s at spaces; a word that starts with " is a Go string.
func splitWords(s string) ([]string, error) {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, err
			}
			w, _ := strconv.Unquote(q)
			out, s = append(out, w), s[len(q):]
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		out, s = append(out, w), rest
	}
	return out, nil
}

// source returns what the quote should show and the lines it comes from.
func (c *checker) source(q quote) ([]string, lines, error) {
	g, err := c.goFile(q.file)
	if err != nil {
		return nil, lines{}, fmt.Errorf("quote of %s: %v", q.spec, err)
	}
	decl, doc, err := g.find(q.spec)
	if err != nil {
		return nil, lines{}, fmt.Errorf("quote: %v (renamed or moved? fix the marker)", err)
	}
	l := decl
	switch {
	case q.withDoc && doc.from > 0:
		l.from = doc.from
	case q.from != "":
		if l, err = g.within(decl, q.from, q.to); err != nil {
			return nil, lines{}, fmt.Errorf("quote of %s: %v (fix the marker)", q.spec, err)
		}
	}
	return g.text(l), l, nil
}

// within returns the lines of decl from the first that contains from to
// the next that contains to.
func (g *goFile) within(decl lines, from, to string) (lines, error) {
	for i := decl.from; i <= decl.to; i++ {
		if !strings.Contains(g.lines[i-1], from) {
			continue
		}
		for j := i; j <= decl.to; j++ {
			if strings.Contains(g.lines[j-1], to) {
				return lines{i, j}, nil
			}
		}
		return lines{}, fmt.Errorf("no line containing %q after line %d", to, i)
	}
	return lines{}, fmt.Errorf("no line containing %q", from)
}

// refLink is the line reference a quote of file's lines l must carry in
// the document at docPath.
func refLink(docPath, file string, l lines) string {
	return fmt.Sprintf("[%s#%s](%s#%s)", file, l.anchor(), relPath(path.Dir(docPath), file), l.anchor())
}

// relPath is the relative slash path from dir to target, both slash
// paths from the root.
func relPath(dir, target string) string {
	r, err := filepath.Rel(filepath.FromSlash(dir), filepath.FromSlash(target))
	if err != nil { // both are relative to the root: can not happen
		return target
	}
	return filepath.ToSlash(r)
}

func (c *checker) checkQuotes(d *doc) []Problem {
	var probs []Problem
	for _, q := range d.quotes() {
		if q.err != nil {
			probs = append(probs, d.problem(q.marker, "%v", q.err))
			continue
		}
		want, l, err := c.source(q)
		if err != nil {
			probs = append(probs, d.problem(q.marker, "%v", err))
			continue
		}
		if got := d.body(q.block); !slices.Equal(got, want) {
			probs = append(probs, d.problem(q.block.open, "quote of %s %s differs from the source (- doc, + source):\n%s%s",
				q.file, q.spec, diff(got, want), fixHint))
		}
		ref := refLink(d.path, q.file, l)
		switch {
		case q.linkLine < 0:
			probs = append(probs, d.problem(q.block.close, "quote of %s %s: no line reference after the block; want %s on the next line; %s",
				q.file, q.spec, ref, fixHint))
		case strings.TrimSpace(d.lines[q.linkLine][:q.linkEnd]) != ref:
			probs = append(probs, d.problem(q.linkLine, "quote of %s %s: line reference %s is stale; the source is at %s; %s",
				q.file, q.spec, strings.TrimSpace(d.lines[q.linkLine][:q.linkEnd]), ref, fixHint))
		}
	}
	return probs
}

// fixQuotes rewrites every quote of d, and its line reference, from the
// source. Quotes it can not resolve are left as they are (check reports
// them).
func (c *checker) fixQuotes(d *doc) {
	ls := slices.Clone(d.lines)
	for _, q := range slices.Backward(d.quotes()) { // from the end: earlier indexes stay valid
		if q.err != nil {
			continue
		}
		want, l, err := c.source(q)
		if err != nil {
			continue
		}
		ref := q.block.indent + refLink(d.path, q.file, l)
		if q.linkLine >= 0 {
			ls[q.linkLine] = ref + ls[q.linkLine][q.linkEnd:]
		} else {
			ls = slices.Insert(ls, q.block.close+1, ref)
		}
		body := make([]string, len(want))
		for i, w := range want {
			if w != "" {
				w = q.block.indent + w
			}
			body[i] = w
		}
		ls = slices.Replace(ls, q.block.open+1, q.block.close, body...)
	}
	d.setLines(ls)
}

// diff is a line diff of a (the doc) against b (the source): the lines
// only one of them has, marked - and +, with the lines they share elided.
func diff(a, b []string) string {
	// Longest common subsequence; quotes are short.
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	shown, elided := 0, false
	emit := func(mark, s string) {
		if shown < 30 {
			fmt.Fprintf(&out, "\t%s %s\n", mark, s)
		}
		shown++
		elided = false
	}
	for i, j := 0, 0; i < n || j < m; {
		switch {
		case i < n && j < m && a[i] == b[j]:
			if !elided {
				out.WriteString("\t  ...\n")
				elided = true
			}
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			emit("-", a[i])
			i++
		default:
			emit("+", b[j])
			j++
		}
	}
	if shown > 30 {
		fmt.Fprintf(&out, "\t(%d more changed lines)\n", shown-30)
	}
	return out.String()
}
