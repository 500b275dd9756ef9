package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hourLesson is a chapter the path reads: its opening (12 words, title
// included) and one section (12 words, heading included), which uses
// "session" before its bold definition, and an extra section the path
// links in parentheses, which must not count.
const hourLesson = `# A chapter

The opening tells what an **ensemble** is, in short.

## The part

A session appears here; a **session** is defined here.

## Extra

Words the path leaves out, as an optional extra.
`

// hourReadme returns a walkthrough index whose path reads the opening and
// the section, claiming words for each row and total for the sentence,
// with an optional extra in parentheses that must not count.
func hourReadme(words1, words2, total, minutes string) string {
	return `# Walkthrough

## The 60-minute path

| # | read | words | then answer |
|---:|---|---:|---|
| 1 | [The chapter](00-a.md): the opening | ` + words1 + ` | |
| 2 | [The part](00-a.md#the-part) (and [an extra](00-a.md#extra)) | ` + words2 + ` | |

In all ` + total + ` words, and 179 more in the questions:
about ` + minutes + ` minutes at 200 words a minute.
`
}

// hourFixture writes the walkthrough and its chapter into a fixture, with
// the path's terms those of the chapter.
func hourFixture(t *testing.T, readme string) string {
	t.Helper()
	old := hourPathTerms
	hourPathTerms = []string{"ensemble", "session"}
	t.Cleanup(func() { hourPathTerms = old })
	root := fixture(t, "")
	for name, text := range map[string]string{"README.md": readme, "00-a.md": hourLesson} {
		if err := os.WriteFile(filepath.Join(root, "docs", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestHourPathRecountsRowsAndTotal(t *testing.T) {
	probs, err := Check(hourFixture(t, hourReadme("12", "12", "24", "1")))
	if err != nil {
		t.Fatal(err)
	}
	var terms, counts []string
	for _, p := range probs {
		if strings.Contains(p.Msg, "before it defines it") {
			terms = append(terms, p.String())
		} else {
			counts = append(counts, p.String())
		}
	}
	if len(counts) != 0 {
		t.Errorf("right counts reported as wrong: %v", counts)
	}
	if len(terms) != 1 || !strings.Contains(terms[0], `"session"`) || !strings.Contains(terms[0], "docs/00-a.md:7") {
		t.Errorf("want one problem: \"session\" used at docs/00-a.md:7 before its definition; got %v", terms)
	}
}

func TestHourPathCatchesAStaleCount(t *testing.T) {
	probs, err := Check(hourFixture(t, hourReadme("12", "10", "22", "1")))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range probs {
		if !strings.Contains(p.Msg, "before it defines it") {
			got = append(got, p.Msg)
		}
	}
	want := []string{"row 2 of the 60-minute path says 10 words; its sections have 12",
		"the 60-minute path says 22 words in all; its rows add up to 24"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestHourPathCatchesWrongMinutes(t *testing.T) {
	probs, err := Check(hourFixture(t, hourReadme("12", "12", "24", "5")))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		if strings.Contains(p.Msg, "about 5 minutes") && strings.Contains(p.Msg, "are about 1") {
			return
		}
	}
	t.Errorf("minutes not caught; problems: %v", probs)
}
