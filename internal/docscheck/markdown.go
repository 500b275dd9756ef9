package docscheck

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// The little of Markdown the checks need: fenced blocks, code spans, links
// and headings, found the way GitHub renders them in the files we write
// (not a full CommonMark parser: no indented code blocks, no setext
// headings).

// doc is one Markdown file.
type doc struct {
	path  string   // slash path from the root
	lines []string // without their "\n"

	// Derived from lines by parse.
	fences        []fence
	inFence       []bool // per line: inside a fenced block, fence lines included
	fenceProblems []Problem
	prose         string // lines outside fences; fences, comments and code spans blanked
	raw           string // the same lines, nothing blanked (fenced lines empty)
	lineStart     []int  // offset of each line in prose and raw
	spans         []span // code spans outside fences
}

// fence is a fenced code block.
type fence struct {
	open, close int    // line indexes of the fence lines; close is len(lines) when unclosed
	indent      string // the opening fence's indentation
	info        string // the first word of the info string ("go", "mermaid", "")
}

// span is a code span's content and the line it starts on (0-based).
type span struct {
	line int
	text string
}

func parseDoc(path, text string) *doc {
	d := &doc{path: path}
	d.setLines(strings.Split(strings.TrimSuffix(text, "\n"), "\n"))
	return d
}

// text is the file's content.
func (d *doc) text() string { return strings.Join(d.lines, "\n") + "\n" }

func (d *doc) problem(line int, format string, args ...any) Problem {
	return Problem{File: d.path, Line: line + 1, Msg: fmt.Sprintf(format, args...)}
}

// setLines replaces the content and derives the rest again.
func (d *doc) setLines(lines []string) {
	d.lines = lines
	d.findFences()
	d.findProse()
}

var fenceRE = regexp.MustCompile("^(\\s*)(```+|~~~+)\\s*([^\\s`]*)")

func (d *doc) findFences() {
	d.fences, d.fenceProblems = nil, nil
	d.inFence = make([]bool, len(d.lines))
	for i := 0; i < len(d.lines); i++ {
		m := fenceRE.FindStringSubmatch(d.lines[i])
		if m == nil {
			continue
		}
		f := fence{open: i, close: len(d.lines), indent: m[1], info: strings.ToLower(m[3])}
		marker := m[2]
		for j := i + 1; j < len(d.lines); j++ {
			t := strings.TrimSpace(d.lines[j])
			if strings.HasPrefix(t, marker) && strings.Trim(t, marker[:1]) == "" {
				f.close = j
				break
			}
		}
		if f.close == len(d.lines) {
			d.fenceProblems = append(d.fenceProblems, d.problem(i, "code fence %s is never closed", marker))
		}
		for j := f.open; j <= f.close && j < len(d.lines); j++ {
			d.inFence[j] = true
		}
		d.fences = append(d.fences, f)
		i = f.close
	}
}

// body returns a fenced block's lines, without the fence's indentation.
func (d *doc) body(f fence) []string {
	var out []string
	for _, l := range d.lines[f.open+1 : min(f.close, len(d.lines))] {
		out = append(out, strings.TrimPrefix(l, f.indent))
	}
	return out
}

// findProse builds the text outside fenced blocks twice: as it is (raw),
// and with HTML comments and code spans blanked (prose), so that a link
// is only found where GitHub renders one. Both keep every offset.
func (d *doc) findProse() {
	var b strings.Builder
	d.lineStart = make([]int, len(d.lines))
	for i, l := range d.lines {
		d.lineStart[i] = b.Len()
		if !d.inFence[i] {
			b.WriteString(l)
		}
		b.WriteByte('\n')
	}
	d.raw = b.String()
	p := []byte(d.raw)
	d.spans = nil
	for _, s := range codeSpans(p) { // blanks comments too
		d.spans = append(d.spans, span{line: d.lineOf(s[0]), text: normSpan(string(p[s[0]:s[1]]))})
		blank(p[s[0]:s[1]])
	}
	d.prose = string(p)
}

// lineOf returns the 0-based line of an offset in prose or raw.
func (d *doc) lineOf(off int) int {
	lo, hi := 0, len(d.lineStart)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if d.lineStart[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// blank overwrites b with spaces, keeping newlines (and so line numbers).
func blank(b []byte) {
	for i := range b {
		if b[i] != '\n' {
			b[i] = ' '
		}
	}
}

// codeSpans returns the content ranges of the code spans in p (a run of n
// backticks up to the next run of exactly n, within one paragraph), and
// blanks the HTML comments of p on its way: whichever of the two starts
// first hides the other.
func codeSpans(p []byte) [][2]int {
	var out [][2]int
	run := func(i int) int {
		j := i
		for j < len(p) && p[j] == '`' {
			j++
		}
		return j - i
	}
	for i := 0; i < len(p); {
		if bytes.HasPrefix(p[i:], []byte("<!--")) {
			if end := bytes.Index(p[i+4:], []byte("-->")); end >= 0 {
				blank(p[i : i+4+end+3])
				i += 4 + end + 3
				continue
			}
		}
		if p[i] != '`' {
			i++
			continue
		}
		n := run(i)
		closed := false
		for j := i + n; j < len(p); {
			if p[j] == '\n' && j+1 < len(p) && isBlankLine(p[j+1:]) {
				break // a paragraph ends before the span closes: no span
			}
			if p[j] != '`' {
				j++
				continue
			}
			if m := run(j); m == n {
				out = append(out, [2]int{i + n, j})
				i, closed = j+n, true
				break
			} else {
				j += m
			}
		}
		if !closed {
			i += n
		}
	}
	return out
}

// isBlankLine reports whether the line at the start of p is blank.
func isBlankLine(p []byte) bool {
	for _, c := range p {
		switch c {
		case '\n':
			return true
		case ' ', '\t':
		default:
			return false
		}
	}
	return true
}

// normSpan is a code span's text as rendered: a line break is a space, and
// one space at each end goes when both are there.
func normSpan(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 2 && s[0] == ' ' && s[len(s)-1] == ' ' && strings.TrimSpace(s) != "" {
		s = s[1 : len(s)-1]
	}
	return s
}

// link is one link or image in the prose.
type link struct {
	text        string // the link text, as written (code spans included)
	target      string // the destination, as written
	line        int    // 0-based line of the destination
	start, end  int    // offsets of the destination in prose
	isReference bool   // a [label]: target definition
}

var (
	inlineLinkRE = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^()\s<>]+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	refDefRE     = regexp.MustCompile(`(?m)^ {0,3}\[([^\]]+)\]:[ \t]*<?([^\s<>]+)>?`)
	htmlLinkRE   = regexp.MustCompile(`(?i)<(?:a|img)\s[^>]*?(?:href|src)\s*=\s*"([^"]*)"`)
)

// links returns every link, image and reference definition outside code.
func (d *doc) links() []link {
	var out []link
	for _, m := range inlineLinkRE.FindAllStringSubmatchIndex(d.prose, -1) {
		out = append(out, link{text: d.raw[m[2]:m[3]], target: d.prose[m[4]:m[5]],
			line: d.lineOf(m[4]), start: m[4], end: m[5]})
	}
	for _, m := range refDefRE.FindAllStringSubmatchIndex(d.prose, -1) {
		out = append(out, link{text: d.raw[m[2]:m[3]], target: d.prose[m[4]:m[5]],
			line: d.lineOf(m[4]), start: m[4], end: m[5], isReference: true})
	}
	for _, m := range htmlLinkRE.FindAllStringSubmatchIndex(d.prose, -1) {
		out = append(out, link{target: d.prose[m[2]:m[3]], line: d.lineOf(m[2]), start: m[2], end: m[3]})
	}
	return out
}

var (
	headingRE = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	htmlIDRE  = regexp.MustCompile(`(?i)<a\s[^>]*?(?:name|id)\s*=\s*"([^"]+)"`)
	mdLinkRE  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// anchors returns the fragment names the file defines: GitHub's slug of
// every heading (a repeated one gets -1, -2, ...) and HTML anchors.
func (d *doc) anchors() map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for i, l := range d.lines {
		if d.inFence[i] {
			continue
		}
		if m := headingRE.FindStringSubmatch(l); m != nil {
			s := slug(m[1])
			if n := seen[s]; n > 0 {
				out[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				out[s] = true
			}
			seen[s]++
		}
		for _, m := range htmlIDRE.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
	}
	return out
}

// slug is GitHub's anchor for a heading: its rendered text in lower case,
// each space turned into a hyphen, and only letters, marks, decimal and
// letter numbers (〇, Ⅲ), connector punctuation (_, ＿), hyphens and the
// symbols that are alphabetic (Ⓐ) kept: the rule of github-slugger, the
// library that reproduces GitHub's anchors. It drops the other numbers
// (①, ²), other punctuation, symbols, separators and format characters.
// Go's Unicode tables are newer than github-slugger's (13.0), so a letter
// assigned since then is kept here and dropped there.
func slug(heading string) string {
	t := mdLinkRE.ReplaceAllString(heading, "$1")
	t = strings.NewReplacer("`", "", "*", "").Replace(t)
	var b strings.Builder
	for _, r := range strings.ToLower(t) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || slugKeeps(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// slugKeeps reports whether GitHub's anchors keep r (a hyphen aside).
func slugKeeps(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.In(r, unicode.Nd, unicode.Nl, unicode.Pc, unicode.Other_Alphabetic)
}
