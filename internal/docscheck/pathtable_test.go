package docscheck

import (
	"slices"
	"strings"
	"testing"

	"github.com/zklocks/zklocks/internal/callpath"
)

// A made-up variant x: its table against a call tree written by hand, so
// the test needs neither the go command nor ZooKeeper. TestDocs checks
// the real tables against the trees zklocks path prints.
const xDoc = `// Package x is a lock.
//
// # Through the code
//
// A Lock or TryLock call goes:
//
//	Mutex.Lock, TryLock   x/mutex.go               prefixes errors
//	                                               (more on the row above)
//	Mutex.reenter, move   x/owners.go              a bare name is Mutex's too
//	lockq.Slot.Take       internal/lockq/queue.go  the wrong file
//	lockq.Queue           internal/lockq           a type: one of its methods
//	Mutex.gone            x/mutex.go               not on the tree
//	Mutex.lock x/recipe.go  one space: the columns run together
//
// # Another heading
//
//	Mutex.elsewhere  x/mutex.go  outside the section
package x
`

var xTree = []*callpath.Func{
	{Name: "x.Mutex.Lock", File: "x/mutex.go"},
	{Name: "x.Mutex.TryLock", File: "x/mutex.go"},
	{Name: "x.Mutex.reenter", File: "x/owners.go"},
	{Name: "x.Mutex.move", File: "x/owners.go"},
	{Name: "x.Mutex.lock", File: "x/recipe.go"},
	{Name: "lockq.Slot.Take", File: "internal/lockq/slot.go"},
	{Name: "lockq.Queue.Join", File: "internal/lockq/join.go"},
}

func TestPathTables(t *testing.T) {
	tables, probs := parsePathTables("x/doc.go", "x", xDoc)
	if len(probs) != 0 || len(tables) != 1 {
		t.Fatalf("parsed %d tables, problems %v; want 1 table", len(tables), probs)
	}
	if want := []string{"x.Mutex.Lock", "x.Mutex.TryLock"}; !slices.Equal(tables[0].roots, want) {
		t.Errorf("roots %v; want %v", tables[0].roots, want)
	}
	var got []string
	for _, p := range checkPathTable("x/doc.go", "x", tables[0], xTree) {
		got = append(got, p.String())
	}
	want := []string{
		"x/doc.go:10: lockq.Slot.Take is in internal/lockq/slot.go, not internal/lockq/queue.go",
		"x/doc.go:12: Mutex.gone is not on the call tree",
		`x/doc.go:13: "one space: the columns run together" is not a file`,
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d: %s\nwant it to begin %s", i, got[i], want[i])
		}
	}
}

func TestPathTablesNeedTheirSentence(t *testing.T) {
	_, probs := parsePathTables("x/doc.go", "x", "// # Through the code\n//\n//\tMutex.Lock  x/mutex.go  here\npackage x\n")
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, `no "A Lock call goes:"`) {
		t.Errorf("a table without its call sentence: %v", probs)
	}
	_, probs = parsePathTables("x/doc.go", "x", "// Package x.\npackage x\n")
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, "no # Through the code section") {
		t.Errorf("a doc.go without the section: %v", probs)
	}
}
