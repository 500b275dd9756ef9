package docscheck

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the docs' quotes and line references from the source")

// TestDocs checks every Markdown file of the module against the source;
// with -update it first rewrites what drifted.
func TestDocs(t *testing.T) {
	root := moduleRoot(t)
	var probs []Problem
	var err error
	if *update {
		var updated []string
		updated, probs, err = Update(root)
		for _, f := range updated {
			t.Logf("updated %s: read the prose around its quotes again", f)
		}
	} else {
		probs, err = Check(root)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Error(p)
	}
}

// moduleRoot is the directory of the go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestCatches feeds the checker one small document per kind of drift and
// expects exactly one problem, saying what drifted; good.md uses every
// form correctly and must pass. Each case runs in a copy of
// testdata/base, a module in miniature (lib/lib.go and its test).
func TestCatches(t *testing.T) {
	cases := []struct {
		file string // in testdata/cases, checked as docs/<file>
		want string // in the one problem expected; "" for none
	}{
		{"good.md", ""},

		{"quote_stale.md", "quote of lib/lib.go func Double differs from the source"},
		{"quote_lines_stale.md", "line reference [lib/lib.go#L19-L21](../lib/lib.go#L19-L21) is stale; the source is at [lib/lib.go#L20-L22]"},
		{"quote_no_link.md", "no line reference after the block; want [lib/lib.go#L20-L22](../lib/lib.go#L20-L22)"},
		{"quote_unknown_decl.md", "lib/lib.go declares no func Triple"},
		{"quote_unknown_file.md", "quote of func Double: open"},
		{"quote_not_go_block.md", "must be followed by a ```go block"},
		{"quote_bad_marker.md", "malformed quote marker"},
		{"quote_range_missing.md", `no line containing "if z"`},

		{"link_broken.md", "broken link ../gone.txt: gone.txt does not exist"},
		{"link_after_open_comment.md", "broken link ../gone.txt"},
		{"link_in_comment.md", "no test function TestTriple"},
		{"link_outside.md", "leads out of the repository"},
		{"link_heading.md", "docs/other.md has no heading with the anchor #no-such-heading"},
		{"link_self_heading.md", "has no heading with the anchor #titel"},
		{"link_heading_zh.md", "has no heading with the anchor #代价与开销"},
		{"link_line_range.md", "lines 25-99 are not within lib/lib.go (36 lines)"},
		{"link_line_noname.md", "the link text must name the declaration"},
		{"link_line_stale.md", "is stale: the declaration is at #L25-L31"},
		{"link_line_nongo.md", "line anchors are only checked in Go files"},
		{"link_line_dir.md", "a line anchor on a directory"},
		{"link_fragment_nonmd.md", "an anchor that is not a line"},

		{"test_name.md", "no test function TestTriple"},
		{"test_subtest.md", "no test function TestTriple"},
		{"test_command.md", "command runs TestTriple, but no test function in lib starts with it"},
		{"test_command_pkg.md", "command names ./nolib/, which is not a directory"},
		{"test_command_wrong_pkg.md", "command runs TestDouble, but no test function in docs starts with it"},
		{"qualified_name.md", "package lib (lib) declares no Triple"},
		{"qualified_member.md", "Counter has no method or field Sub"},

		{"mermaid_keyword.md", "does not begin with a diagram keyword"},
		{"mermaid_unfenced.md", "fence it as ```mermaid"},
		{"mermaid_unclosed.md", "not closed by end"},
		{"mermaid_extra_end.md", "end without an open"},
		{"fence_unclosed.md", "never closed"},

		{"09-lesson-too-long.md", "over 2100"},
		{"09-lesson-then-deep-dive.md", ""},
	}
	for _, tc := range cases {
		t.Run(strings.TrimSuffix(tc.file, ".md"), func(t *testing.T) {
			wantOneProblem(t, fixture(t, tc.file), "docs/"+tc.file, tc.want)
		})
	}
}

// TestUpdate rewrites a document whose quotes and line links all drifted
// and compares it with the expected result: blocks, line references
// (fixed in place, or added when missing) and line links follow the
// source, and nothing else changes. A second Update changes nothing, and
// Check is then clean.
func TestUpdate(t *testing.T) {
	root := fixture(t, "")
	stale, err := os.ReadFile(filepath.Join("testdata", "update", "stale.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(root, "docs", "stale.md")
	if err := os.WriteFile(doc, stale, 0o644); err != nil {
		t.Fatal(err)
	}
	if probs, _ := Check(root); len(probs) != 7 {
		t.Errorf("Check before Update: %d problems, want 7 (3 stale blocks, 1 stale and 2 missing references, 1 stale link):", len(probs))
		for _, p := range probs {
			t.Log(p)
		}
	}

	updated, probs, err := Update(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(updated) != 1 || updated[0] != "docs/stale.md" {
		t.Errorf("Update rewrote %v, want [docs/stale.md]", updated)
	}
	for _, p := range probs {
		t.Errorf("after Update: %s", p)
	}
	got, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "update", "want.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("after Update, docs/stale.md differs from testdata/update/want.md (- got, + want):\n%s",
			diff(strings.Split(string(got), "\n"), strings.Split(string(want), "\n")))
	}

	if again, _, err := Update(root); err != nil || len(again) != 0 {
		t.Errorf("second Update rewrote %v (err %v), want nothing", again, err)
	}
}

// wantOneProblem checks the tree at root and expects no problem (want
// "") or exactly one, in file, whose message contains want.
func wantOneProblem(t *testing.T, root, file, want string) {
	t.Helper()
	probs, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case want == "" && len(probs) == 0:
	case want != "" && len(probs) == 1 && strings.Contains(probs[0].Msg, want):
		if probs[0].File != file {
			t.Errorf("problem reported in %s, want %s", probs[0].File, file)
		}
	default:
		t.Errorf("want exactly one problem containing %q, got %d:", want, len(probs))
		for _, p := range probs {
			t.Log(p)
		}
	}
}

// fixture copies testdata/base into a temporary directory and, unless file
// is "", testdata/cases/file into its docs directory; it returns the copy.
func fixture(t *testing.T, file string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "base"))); err != nil {
		t.Fatal(err)
	}
	if file == "" {
		return root
	}
	b, err := os.ReadFile(filepath.Join("testdata", "cases", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", file), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestLessonWords logs each chapter's lesson-layer length (go test -v
// -run TestLessonWords ./internal/docscheck); TestDocs enforces the limit.
func TestLessonWords(t *testing.T) {
	root := moduleRoot(t)
	files, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	c := &checker{root: root, mds: map[string]*doc{}}
	for _, rel := range files {
		if !isChapter(rel) {
			continue
		}
		d, err := c.load(rel)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-32s %5d words in the lesson layer (%d lines in all)", rel, d.lessonWords(), len(d.lines))
	}
}
