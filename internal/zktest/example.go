package zktest

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// MainWithExamples is Main for a package whose Examples talk to ZooKeeper.
//
// An Example connects the way a program does, to the servers in
// ZK_SERVERS. So when ZK_SERVERS is unset and the run selects an Example,
// MainWithExamples starts the local ensemble before the run and sets
// ZK_SERVERS to it in this process's environment. The package's tests
// still treat that ensemble as local: Ensemble and PrivateEnsemble do not
// skip because of it.
//
// Examples can not skip themselves under -short as tests do, so there it
// runs only the tests and fuzz targets (which skip), unless -run says
// otherwise.
func MainWithExamples(m *testing.M) {
	flag.Parse()
	run := flag.Lookup("test.run").Value.String()
	if testing.Short() && run == "" {
		_ = flag.Set("test.run", "^(Test|Fuzz)")
	}
	if !testing.Short() && external() == nil && runsAnExample(m, run) {
		exportLocal()
	}
	Main(m)
}

// exportLocal starts the local ensemble and sets ZK_SERVERS to it. When
// the start fails it says why on stderr: the Examples then fail to
// connect, and every test that needs ZooKeeper fails with the same error.
func exportLocal() {
	e, _, err := startLocal()
	if err != nil {
		fmt.Fprintf(os.Stderr, "zktest: no ensemble for the Examples: %v\n", err)
		return
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "zktest: started a local %d-node ZooKeeper %s ensemble in %v for the Examples: ZK_SERVERS=%s\n",
			e.Size(), e.Version(), local.took.Round(time.Millisecond), e.ConnectString())
	}
	local.mu.Lock()
	defer local.mu.Unlock()
	local.exported = e.ConnectString()
	_ = os.Setenv("ZK_SERVERS", local.exported) // fails only on a malformed name
}

// runsAnExample reports whether the -run pattern run may select one of
// m's Examples. A testing.M whose Examples it can not list counts as
// having some.
func runsAnExample(m *testing.M, run string) bool {
	examples := reflect.ValueOf(m).Elem().FieldByName("examples")
	if !examples.IsValid() || examples.Kind() != reflect.Slice {
		return true
	}
	names := make([]string, examples.Len())
	for i := range names {
		names[i] = examples.Index(i).FieldByName("Name").String()
	}
	return maySelect(run, names)
}

// maySelect reports whether the -run pattern run may select a test named
// one of names, each a name of one level (no '/'). It errs towards true:
// a pattern it can not judge counts as selecting, which costs at most an
// ensemble start the run did not need.
//
// go test matches each level of a name against the pattern's element of
// that level ('/' separates levels, '|' alternatives), so a one-level name
// is selected when some first-level element matches it. Splitting at every
// '/' and '|' yields those elements and more; a piece cut out of (...) or
// [...] does not compile, which counts as a match.
func maySelect(run string, names []string) bool {
	if len(names) == 0 {
		return false
	}
	for _, piece := range strings.Split(strings.ReplaceAll(run, "|", "/"), "/") {
		re, err := regexp.Compile(piece)
		if err != nil {
			return true
		}
		for _, name := range names {
			if re.MatchString(name) {
				return true
			}
		}
	}
	return false
}
