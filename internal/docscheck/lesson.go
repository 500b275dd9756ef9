package docscheck

import (
	"path"
	"regexp"
	"strings"
)

// A chapter (docs/NN-name.md) is read in two layers: the lesson, which a
// reader gets through in about ten minutes, and a "Deep dive" after it.
// The lesson is everything above the first "## Deep dive" heading (the
// whole chapter when there is none). TestLessonWords logs each chapter's
// count.

// LessonWordLimit is the most words a chapter's lesson layer may have:
// about ten minutes at 200 words a minute, with some slack. Fenced code
// (the quoted recipe, diagrams) is not counted: it is read differently.
const LessonWordLimit = 2100

var (
	chapterRE  = regexp.MustCompile(`^docs/\d\d-[^/]+\.md$`)
	deepDiveRE = regexp.MustCompile(`(?i)^##\s+deep dive\b`)
)

// isChapter reports whether a slash path from the root is a chapter.
func isChapter(rel string) bool { return chapterRE.MatchString(rel) }

// LessonWords counts the words of a chapter's lesson layer outside fenced
// blocks and HTML comments.
func (d *doc) lessonWords() int {
	n := 0
	for i, l := range d.lines {
		if d.inFence[i] {
			continue
		}
		if deepDiveRE.MatchString(l) {
			break
		}
		n += len(strings.Fields(stripComments(l)))
	}
	return n
}

var commentRE = regexp.MustCompile(`<!--.*?-->`)

func stripComments(l string) string { return commentRE.ReplaceAllString(l, " ") }

func checkLessonLength(d *doc) []Problem {
	if !isChapter(d.path) {
		return nil
	}
	if n := d.lessonWords(); n > LessonWordLimit {
		return []Problem{d.problem(0, "the lesson layer of %s has %d words, over %d (about ten minutes): move edge cases, method and history below a \"## Deep dive\" heading or to a page of their own",
			path.Base(d.path), n, LessonWordLimit)}
	}
	return nil
}
