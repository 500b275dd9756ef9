package callpath

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The trees read the module's source with the go command; no ZooKeeper.
var program = sync.OnceValues(func() (*Program, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := FindRoot(wd)
	if err != nil {
		return nil, err
	}
	return Load(root)
})

// tree returns spec's tree and its printed form.
func tree(t *testing.T, spec string) (*Tree, string) {
	t.Helper()
	p, err := program()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := p.Tree(spec)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tr.Write(&out); err != nil {
		t.Fatal(err)
	}
	return tr, out.String()
}

var (
	listed = regexp.MustCompile(`^( *)(\S+)  (\S+):\d+  (\d+) lines$`)
	total  = regexp.MustCompile(`^total: (\d+) lines, (\d+) files, (\d+) functions$`)
)

// checkTotals holds the last line of out to the lines above it: the sum
// of the lengths printed, the files and the functions listed.
func checkTotals(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	sum, files, funcs := 0, map[string]bool{}, 0
	for _, l := range lines[:len(lines)-1] {
		if m := listed.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[4])
			sum, files[m[3]], funcs = sum+n, true, funcs+1
		} else if !strings.HasSuffix(l, " (seen)") && !strings.HasSuffix(l, " (func literal)") {
			t.Errorf("line %q is neither a function nor a reference", l)
		}
	}
	want := "total: " + strconv.Itoa(sum) + " lines, " + strconv.Itoa(len(files)) + " files, " + strconv.Itoa(funcs) + " functions"
	if last := lines[len(lines)-1]; last != want || !total.MatchString(last) {
		t.Errorf("last line %q; the lines above add up to %q", last, want)
	}
}

func TestTokenTree(t *testing.T) {
	tr, out := tree(t, "sequential.Mutex.Token")
	t.Log("\n" + out)
	checkTotals(t, out)
	if f := tr.Root.Func; f.Name != "sequential.Mutex.Token" || f.File != "sequential/mutex.go" || f.Lines < 1 {
		t.Errorf("root %+v; want sequential.Mutex.Token in sequential/mutex.go", *f)
	}
	if !strings.Contains(out, "\n  lockq.Slot.Token  internal/lockq/slot.go:") {
		t.Error("Token's tree does not call lockq.Slot.Token in internal/lockq/slot.go at depth 1")
	}
}

// A Lock reaches go-zookeeper and stops at its first frame; each function
// is listed once, and only this module's and go-zookeeper's.
func TestLockTreeStopsAtZooKeeper(t *testing.T) {
	tr, out := tree(t, "sequential.Mutex.Lock")
	checkTotals(t, out)
	if !regexp.MustCompile(`\n +zk\.Conn\.Create  github\.com/go-zookeeper/zk@v[^/]+/conn\.go:\d+  \d+ lines\n`).MatchString(out) {
		t.Error("no zk.Conn.Create at module@version/conn.go in Lock's tree")
	}
	names := map[string]bool{}
	tr.Walk(func(n *Node) {
		if n.Func.Pkg == ZK && len(n.Children) > 0 {
			t.Errorf("%s has calls listed; the tree should stop at go-zookeeper", n.Func.Name)
		}
		if !shown(n.Func.Pkg) {
			t.Errorf("%s of %s is listed", n.Func.Name, n.Func.Pkg)
		}
		if !n.Seen && !n.Literal {
			if names[n.Func.Name] {
				t.Errorf("%s is listed twice", n.Func.Name)
			}
			names[n.Func.Name] = true
		}
	})
}

// The keeper interface that Slot calls its queue through resolves to the
// queue the variant builds: naive.lockNode for naive, lockq.Queue for
// sequential, not both (as class hierarchy analysis would have it).
func TestInterfaceCallsReachTheVariantsQueue(t *testing.T) {
	_, seq := tree(t, "sequential.Mutex.Lock")
	_, naive := tree(t, "naive.Mutex.Lock")
	if !strings.Contains(naive, " naive.lockNode.Take  ") || strings.Contains(naive, " lockq.Queue.Join") {
		t.Error("naive's Lock should take naive.lockNode.Take, not lockq.Queue.Join")
	}
	if !strings.Contains(seq, " lockq.Queue.Join  ") || strings.Contains(seq, " naive.lockNode.") {
		t.Error("sequential's Lock should join through lockq.Queue.Join and call nothing of naive.lockNode")
	}
}

func TestBadSpecs(t *testing.T) {
	p, err := program()
	if err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		"optimistic.Mutex.Lock": "unknown variant \"optimistic\" in \"optimistic.Mutex.Lock\"; the variants are naive, sequential,",
		"sequential.Mutex.Nope": "sequential has no function or method \"Mutex.Nope\"; it has ",
		"sequential.Nope.Lock":  "Mutex.Lock, Mutex.Node",
		"sequential":            "New, Revoke",
	} {
		_, err := p.Tree(spec)
		var ne *NameError
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), want) {
			t.Errorf("Tree(%q): %v; want a NameError containing %q", spec, err, want)
		}
	}
}

func TestFindRoot(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := FindRoot(wd)
	if err != nil || filepath.Join(root, "internal", "callpath") != wd {
		t.Errorf("FindRoot(%s) = %s, %v", wd, root, err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FindRoot(filepath.Join(other)); err == nil || !strings.Contains(err.Error(), "is not module "+Module) {
		t.Errorf("FindRoot in another module: %v", err)
	}
}
