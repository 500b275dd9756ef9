package zklocks_test

import (
	"os"
	"strings"
	"testing"
)

// The recipes of reentrant, timeout and rwlock are copies of sequential's on
// purpose: each is read alone, and a diff against sequential/recipe.go
// shows what the variant changes. Every change must be marked: a comment
// block that starts "// <variant>:" marks itself and the one line after
// it (the whole function that line begins, when the block starts
// "// <variant>: this whole function"), and a line ending in a "// <variant>: ..." comment marks itself.
// Everything else must be sequential's line for line, so that a fix to
// one recipe cannot silently miss the others.
func TestRecipesDifferOnlyInMarkedLines(t *testing.T) {
	base := recipeLines(t, "sequential/recipe.go")
	for _, variant := range []string{"reentrant", "timeout", "rwlock"} {
		t.Run(variant, func(t *testing.T) {
			lines := recipeLines(t, variant+"/recipe.go")
			kept, marked := unmarked(lines, variant)
			common := lcs(base, kept)
			if drift := len(kept) - common; drift > 0 {
				t.Errorf("%s/recipe.go has %d unmarked lines that are not in sequential/recipe.go:\n%s",
					variant, drift, strings.Join(missing(kept, base), "\n"))
			}
			replaced := len(base) - common
			if changed := marked + replaced; changed > 50 {
				t.Errorf("%s/recipe.go differs from sequential/recipe.go in %d lines (%d marked, %d of sequential's replaced); keep it to 50", variant, changed, marked, replaced)
			}
			t.Logf("%s: %d lines marked, %d of sequential's replaced", variant, marked, replaced)
		})
	}
}

// recipeLines returns a recipe file's lines after its package clause,
// trimmed, blank lines dropped.
func recipeLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "package ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// unmarked drops the lines variant marks and says how many it dropped.
func unmarked(lines []string, variant string) (kept []string, marked int) {
	tag := "// " + variant + ":"
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, tag):
			whole := strings.HasPrefix(l, tag+" this whole function")
			if len(kept) > 0 && kept[len(kept)-1] == "//" {
				kept, marked = kept[:len(kept)-1], marked+1 // the paragraph break before it
			}
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "// ") && !isStep(lines[i+1]) {
				i++
				marked++
			}
			if i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "//") {
				i++ // the line it marks, or the whole function it begins
				marked++
				for depth := funcBraces(lines[i], whole); depth > 0 && i+1 < len(lines); depth += braces(lines[i]) {
					i++
					marked++
				}
			}
			marked++
		case strings.Contains(l, " "+tag):
			marked++
		default:
			kept = append(kept, l)
		}
	}
	return kept, marked
}

// braces is how many more blocks a line opens than it closes.
func braces(l string) int { return strings.Count(l, "{") - strings.Count(l, "}") }

// funcBraces is braces for a line that begins a function the comment
// before it marks whole, 0 for others.
func funcBraces(l string, whole bool) int {
	if !whole || !strings.HasPrefix(l, "func ") {
		return 0
	}
	return braces(l)
}

// isStep reports whether a comment line begins one of the recipe's
// numbered steps, which a marked comment block does not run into.
func isStep(l string) bool {
	rest := strings.TrimPrefix(l, "// ")
	return len(rest) > 1 && rest[0] >= '0' && rest[0] <= '9' && rest[1] == '.'
}

// lcs is the length of the longest common subsequence of a and b.
func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

// missing lists the lines of a that b does not have at all (a hint for
// the failure message).
func missing(a, b []string) []string {
	have := map[string]bool{}
	for _, l := range b {
		have[l] = true
	}
	var out []string
	for _, l := range a {
		if !have[l] {
			out = append(out, "\t"+l)
		}
	}
	return out
}
