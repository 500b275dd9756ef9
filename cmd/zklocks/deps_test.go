package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The binary must not link test support: testing registers its flags and
// brings its runtime along, and zktest and locktest are built for tests
// only. A runtime package that imports one of them pulls it in here.
func TestNoTestSupportInTheBinary(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the dependencies with: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{
		"testing",
		"github.com/zklocks/zklocks/internal/zktest",
		"github.com/zklocks/zklocks/internal/locktest",
	} {
		if slices.Contains(deps, banned) {
			t.Errorf("cmd/zklocks depends on %s; find the importer with\n"+
				"\tgo list -deps -f '{{.ImportPath}} {{.Imports}}' ./cmd/zklocks", banned)
		}
	}
}
