package docscheck

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// The 60-minute path (docs/README.md, "## The 60-minute path") is a table
// of the sections to read, in order, each row with its word count, and a
// sentence that adds them up into minutes. Readers plan their hour by
// those figures, so they are recounted here, the way a lesson is counted
// (lessonWords: prose and tables, fenced blocks and comments left out):
// a link to a heading counts that section with its subsections, a link to
// a file counts its opening (the text above its first "##" heading), a
// link inside parentheses is an optional extra and is not counted, and a
// section reached twice counts once.
//
// The same walk checks the path's terms: each term of hourPathTerms must
// be defined (in bold, "**ensemble**") where a reader of the path first
// meets it, not used before.

const (
	hourPathDoc     = "docs/README.md"
	hourPathHeading = "the-60-minute-path"
	wordsPerMinute  = 200
)

// hourPathTerms are the terms the path's lessons lean on: a reader who
// meets one before its definition reads on without it.
var hourPathTerms = []string{
	"distributed lock", "fencing token", "ensemble", "leader", "quorum",
	"follower", "session", "ephemeral", "zxid", "linearizable",
}

var (
	hourRowRE   = regexp.MustCompile(`^\|\s*(\d+)\s*\|(.*)\|\s*([\d,]+)\s*\|.*\|\s*$`)
	hourTotalRE = regexp.MustCompile(`In all ([\d,]+) words, and ([\d,]+) more .*?about (\d+) minutes at (\d+) words a minute`)
	linkRE      = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]*)\)`)
	boldRE      = regexp.MustCompile(`\*\*[^*]+\*\*`)
)

// hourRow is one row of the path: its number, the sections it counts and
// the words it claims.
type hourRow struct {
	line    int // 0-based, in docs/README.md
	n       int
	targets []string // link targets outside parentheses, relative to docs/
	claimed int
}

// checkHourPath recounts the path's rows and total and checks its terms.
func (c *checker) checkHourPath(d *doc) []Problem {
	if d.path != hourPathDoc {
		return nil
	}
	rows, totalLine := hourRows(d)
	if len(rows) == 0 {
		return []Problem{d.problem(0, "no table of the 60-minute path under its heading")}
	}
	var probs []Problem
	seen := map[string]bool{} // "file:line" already counted
	var walk []sectionLines   // the path's sections in reading order
	sum := 0
	for _, r := range rows {
		words := 0
		for _, t := range r.targets {
			sec, err := c.section(t)
			if err != nil {
				probs = append(probs, d.problem(r.line, "row %d: %v", r.n, err))
				continue
			}
			walk = append(walk, sec)
			for _, i := range sec.lines {
				key := fmt.Sprintf("%s:%d", sec.doc.path, i)
				if !seen[key] {
					seen[key] = true
					words += len(strings.Fields(stripComments(sec.doc.lines[i])))
				}
			}
		}
		if words != r.claimed {
			probs = append(probs, d.problem(r.line, "row %d of the 60-minute path says %s words; its sections have %s", r.n, thousands(r.claimed), thousands(words)))
		}
		sum += words
	}
	probs = append(probs, checkHourTotal(d, totalLine, sum)...)
	return append(probs, checkTermsDefinedBeforeUse(walk)...)
}

// hourRows parses the table under the path's heading; totalLine is the
// line of the sentence that adds it up (-1 when there is none).
func hourRows(d *doc) (rows []hourRow, totalLine int) {
	totalLine = -1
	in := false
	for i, l := range d.lines {
		if d.inFence[i] {
			continue
		}
		if m := headingRE.FindStringSubmatch(l); m != nil {
			if in {
				break
			}
			in = slug(m[1]) == hourPathHeading
			continue
		}
		if !in {
			continue
		}
		if hourTotalRE.MatchString(strings.Join(d.lines[i:min(i+3, len(d.lines))], " ")) && totalLine < 0 {
			totalLine = i
		}
		m := hourRowRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		read := strings.SplitN(m[2], "|", 2)[0]
		rows = append(rows, hourRow{line: i, n: n, targets: countedLinks(read), claimed: atoiComma(m[3])})
	}
	return rows, totalLine
}

// countedLinks returns the targets of the links in a row's "read" cell
// that are not inside parentheses.
func countedLinks(cell string) []string {
	var out []string
	depth, last := 0, 0
	for _, m := range linkRE.FindAllStringSubmatchIndex(cell, -1) {
		for _, r := range cell[last:m[0]] {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		last = m[1]
		if depth == 0 {
			out = append(out, cell[m[2]:m[3]])
		}
	}
	return out
}

// sectionLines is the part of a document one link of the path points at.
type sectionLines struct {
	doc   *doc
	lines []int // 0-based, outside fenced blocks
}

// section returns the lines a target ("01-naive.md#the-recipe", or a file
// alone for its opening) points at.
func (c *checker) section(target string) (sectionLines, error) {
	file, anchor, _ := strings.Cut(target, "#")
	d, err := c.load(path.Join("docs", file))
	if err != nil {
		return sectionLines{}, fmt.Errorf("%s: %v", target, err)
	}
	start, level := 0, 2 // the opening: up to the first "##"
	if anchor != "" {
		start = -1
		for i, l := range d.lines {
			if m := headingRE.FindStringSubmatch(l); m != nil && !d.inFence[i] && slug(m[1]) == anchor {
				start, level = i, headingLevel(l)
				break
			}
		}
		if start < 0 {
			return sectionLines{}, fmt.Errorf("%s: no heading with that anchor", target)
		}
	}
	sec := sectionLines{doc: d}
	for i := start; i < len(d.lines); i++ {
		if d.inFence[i] {
			continue
		}
		if i > start && headingRE.MatchString(d.lines[i]) && headingLevel(d.lines[i]) <= level {
			break
		}
		sec.lines = append(sec.lines, i)
	}
	return sec, nil
}

// headingLevel is the number of #s of a heading line.
func headingLevel(l string) int {
	l = strings.TrimLeft(l, " ")
	return len(l) - len(strings.TrimLeft(l, "#"))
}

// checkHourTotal checks the sentence that adds the rows up: its total is
// their sum, and its minutes are the words, the questions' included, at
// the rate it names, and no more than sixty.
func checkHourTotal(d *doc, line, sum int) []Problem {
	if line < 0 {
		return []Problem{d.problem(0, "the 60-minute path has no sentence \"In all N words, and Q more ...: about M minutes at R words a minute\"")}
	}
	m := hourTotalRE.FindStringSubmatch(strings.Join(d.lines[line:min(line+3, len(d.lines))], " "))
	total, more, minutes, rate := atoiComma(m[1]), atoiComma(m[2]), atoiComma(m[3]), atoiComma(m[4])
	var probs []Problem
	if total != sum {
		probs = append(probs, d.problem(line, "the 60-minute path says %s words in all; its rows add up to %s", thousands(total), thousands(sum)))
	}
	want := int(math.Round(float64(sum+more) / float64(rate)))
	if rate != wordsPerMinute || minutes != want {
		probs = append(probs, d.problem(line, "the 60-minute path says about %d minutes at %d words a minute; %s words at %d a minute are about %d", minutes, rate, thousands(sum+more), wordsPerMinute, want))
	}
	if want > 60 {
		probs = append(probs, d.problem(line, "the 60-minute path takes about %d minutes of reading alone", want))
	}
	return probs
}

// checkTermsDefinedBeforeUse walks the path's sections in reading order
// and reports each term whose first appearance is not its bold definition.
func checkTermsDefinedBeforeUse(walk []sectionLines) []Problem {
	res := make(map[string]*regexp.Regexp, len(hourPathTerms))
	for _, t := range hourPathTerms {
		res[t] = regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(t) + `s?\b`)
	}
	met := map[string]bool{}
	var probs []Problem
	for _, sec := range walk {
		for _, i := range sec.lines {
			if headingRE.MatchString(sec.doc.lines[i]) {
				continue // a heading names what the section below defines
			}
			l := stripComments(proseLine(sec.doc, i))
			bold := boldRE.FindAllStringIndex(l, -1)
			for _, t := range hourPathTerms {
				if met[t] {
					continue
				}
				loc := res[t].FindStringIndex(l)
				if loc == nil {
					continue
				}
				met[t] = true
				if !inside(loc, bold) {
					probs = append(probs, sec.doc.problem(i, "the 60-minute path uses %q here before it defines it: make this first use its definition, in bold", t))
				}
			}
		}
	}
	for _, t := range hourPathTerms {
		if !met[t] {
			probs = append(probs, Problem{File: hourPathDoc, Msg: fmt.Sprintf("the 60-minute path never uses %q: drop it from hourPathTerms", t)})
		}
	}
	return probs
}

// proseLine is line i of d with code spans blanked: a term in code is a
// name, not a use.
func proseLine(d *doc, i int) string {
	end := len(d.prose)
	if i+1 < len(d.lineStart) {
		end = d.lineStart[i+1]
	}
	return d.prose[d.lineStart[i]:end]
}

// inside reports whether loc lies within one of spans.
func inside(loc []int, spans [][]int) bool {
	for _, s := range spans {
		if loc[0] >= s[0] && loc[1] <= s[1] {
			return true
		}
	}
	return false
}

func atoiComma(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n
}

// thousands writes n with commas, as the docs do (8,131).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
