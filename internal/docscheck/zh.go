package docscheck

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The Chinese edition, docs/zh, translates the lesson layer of each
// English chapter (the part above "## Deep dive"; the deep dives stay in
// English and are linked). It is kept in step by the checks every page
// gets (its links, anchors, Go names and test commands must match the
// repository) and by these:
//
//   - every English chapter docs/NN-name.md has a Chinese chapter
//     docs/zh/NN-*.md (reported in docs/zh/README.md, the edition's map, so
//     that a new chapter shows up as the edition's problem), and each
//     Chinese chapter has an English chapter of its number and links to it;
//   - every page of docs/zh links to at least one English page of docs/
//     that exists (a reader can always reach the full text);
//   - docs/zh/README.md links every page of docs/zh.

const (
	zhDir    = "docs/zh"
	zhReadme = zhDir + "/README.md"
)

var zhChapterRE = regexp.MustCompile(`^docs/zh/(\d\d)-[^/]+\.md$`)

// checkZh runs the checks of the Chinese edition on one file of it.
func (c *checker) checkZh(d *doc) []Problem {
	if !strings.HasPrefix(d.path, zhDir+"/") {
		return nil
	}
	return c.checkZhPage(d)
}

// checkZhPage checks one page of docs/zh.
func (c *checker) checkZhPage(d *doc) []Problem {
	var probs []Problem
	targets := map[string]bool{} // existing files the page links to
	for _, l := range d.links() {
		if r, ok, err := resolve(d.path, l.target); ok && err == nil {
			if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(r.rel))); err == nil {
				targets[r.rel] = true
			}
		}
	}

	if d.path != zhReadme {
		if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(zhReadme))); err != nil {
			probs = append(probs, d.problem(0, "%s has no README.md: the edition's map, which links every page of it", zhDir))
		}
	}

	if m := zhChapterRE.FindStringSubmatch(d.path); m != nil {
		chapters := c.globDocs("docs", m[1])
		switch {
		case len(chapters) == 0:
			probs = append(probs, d.problem(0, "%s summarises chapter %s, but there is no docs/%s-*.md",
				path.Base(d.path), m[1], m[1]))
		case !anyOf(chapters, targets):
			probs = append(probs, d.problem(0, "%s does not link to its English chapter %s",
				path.Base(d.path), strings.Join(chapters, " or ")))
		}
	}

	english := false
	for t := range targets {
		if strings.HasPrefix(t, "docs/") && !strings.HasPrefix(t, zhDir+"/") && strings.HasSuffix(t, ".md") {
			english = true
			break
		}
	}
	if !english {
		probs = append(probs, d.problem(0, "%s links to no English page of docs/ that exists: link the page it renders",
			path.Base(d.path)))
	}

	if d.path == zhReadme {
		for _, p := range c.globDocs("docs", "") {
			if isChapter(p) && len(c.globDocs(zhDir, path.Base(p)[:2])) == 0 {
				probs = append(probs, d.problem(0, "the Chinese edition has no summary of %s: add %s/%s-*.md, linking to it",
					p, zhDir, path.Base(p)[:2]))
			}
		}
		for _, p := range c.globDocs(zhDir, "") {
			if p != d.path && !targets[p] {
				probs = append(probs, d.problem(0, "the map of the Chinese edition does not link %s", p))
			}
		}
	}

	return probs
}

// globDocs lists the Markdown files directly in dir (a slash path from the
// root) whose names start with prefix and a hyphen (all of them for
// prefix ""), as slash paths from the root.
func (c *checker) globDocs(dir, prefix string) []string {
	es, err := os.ReadDir(filepath.Join(c.root, filepath.FromSlash(dir)))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range es {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".md") || (prefix != "" && !strings.HasPrefix(n, prefix+"-")) {
			continue
		}
		out = append(out, dir+"/"+n)
	}
	sort.Strings(out)
	return out
}

func anyOf(paths []string, set map[string]bool) bool {
	for _, p := range paths {
		if set[p] {
			return true
		}
	}
	return false
}
