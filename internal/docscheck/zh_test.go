package docscheck

import (
	"os"
	"path/filepath"
	"testing"
)

// TestZhCatches checks the Chinese edition's checks on small trees: each
// case is testdata/base, then testdata/cases/zh/good (an English chapter,
// its summary, the edition's map and one more page, all in step), then
// the case's own files over them, less the files it removes. good must
// pass; every other case must give exactly one problem, in wantFile.
func TestZhCatches(t *testing.T) {
	cases := []struct {
		dir      string   // in testdata/cases/zh
		remove   []string // files of good the case leaves out
		wantFile string
		want     string
	}{
		{dir: "good"},
		{dir: "no_summary", wantFile: "docs/zh/README.md", want: "the Chinese edition has no summary of docs/02-two.md"},
		{dir: "no_chapter_link", wantFile: "docs/zh/01-one.md", want: "01-one.md does not link to its English chapter docs/01-one.md"},
		{dir: "orphan_summary", wantFile: "docs/zh/03-three.md", want: "summarises chapter 03, but there is no docs/03-*.md"},
		{dir: "no_english_link", wantFile: "docs/zh/extra.md", want: "links to no English page of docs/ that exists"},
		{dir: "map_missing", wantFile: "docs/zh/README.md", want: "does not link docs/zh/extra.md"},
		{dir: "no_readme", remove: []string{"docs/zh/README.md", "docs/zh/extra.md"}, wantFile: "docs/zh/01-one.md", want: "docs/zh has no README.md"},
		// 〇 is a letter number, which GitHub's anchors keep.
		{dir: "letter_number_anchor"},
		{dir: "letter_number_anchor_stale", wantFile: "docs/zh/extra.md", want: "no heading with the anchor #第零步"},

		// What every page gets, on a Chinese page.
		{dir: "stale_anchor", wantFile: "docs/zh/extra.md", want: "docs/01-one.md has no heading with the anchor #the-old-recipe"},
		{dir: "stale_zh_anchor", wantFile: "docs/zh/extra.md", want: "docs/zh/01-one.md has no heading with the anchor #自测题旧"},
		{dir: "stale_test", wantFile: "docs/zh/extra.md", want: "command runs TestTriple, but no test function in lib starts with it"},
		{dir: "stale_name", wantFile: "docs/zh/extra.md", want: "package lib (lib) declares no Triple"},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			root := fixture(t, "")
			for _, dir := range []string{"good", tc.dir} {
				overlay(t, root, filepath.Join("testdata", "cases", "zh", dir))
			}
			for _, f := range tc.remove {
				if err := os.Remove(filepath.Join(root, filepath.FromSlash(f))); err != nil {
					t.Fatal(err)
				}
			}
			wantOneProblem(t, root, tc.wantFile, tc.want)
		})
	}
}

// overlay copies the files under dir, if there is one, into root,
// replacing what is there.
func overlay(t *testing.T, root, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return
	}
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSlug compares slug with GitHub's anchors, as github-slugger 2.0.0
// computes them from a heading's rendered text (the JavaScript library
// that reproduces GitHub's anchors): letters stay (CJK and full-width
// ones too) and are lowered, punctuation goes (full-width included), each
// space becomes a hyphen. Letter numbers, connector punctuation and
// circled letters stay; other numbers and symbols go. The link case is
// written in Markdown; its rendered text is "链接与 强调".
func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"第二步：创建临时顺序节点（EPHEMERAL_SEQUENTIAL）", "第二步创建临时顺序节点ephemeral_sequential"},
		{"1. 问题：羊群效应", "1-问题羊群效应"},
		{"代价、成本与 `Lock` 的开销", "代价成本与-lock-的开销"},
		{"为什么 —— 不用 -1？", "为什么--不用--1"},
		{"第 0 章 ZooKeeper 入门", "第-0-章-zookeeper-入门"},
		{"“引号”《书名》【括号】·间隔", "引号书名括号间隔"},
		{"全角１２３ＡＢＣ", "全角１２３ａｂｃ"},
		{"emoji 🔒 锁", "emoji--锁"},
		{"a\u3000b", "ab"},
		{"[链接](../01-one.md)与 *强调*", "链接与-强调"},
		{"第〇章", "第〇章"},
		{"Part Ⅲ: the queue", "part-ⅲ-the-queue"},
		{"a＿b a‿b", "a＿b-a‿b"},
		{"Ⓐ or ⓑ", "ⓐ-or-ⓑ"},
		{"step ① and x²", "step--and-x"},
		{"café, naïve", "café-naïve"},
		{"$5 + 3 = 8 ©", "5--3--8-"},
	} {
		if got := slug(tc.heading); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q (GitHub's)", tc.heading, got, tc.want)
		}
	}
}
