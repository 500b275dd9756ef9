package docscheck

import (
	"path/filepath"
	"testing"
)

// TestLedgerCatches checks the hardening ledger's checks on small trees:
// testdata/base, then testdata/cases/ledger/good (a ledger whose rows
// name lib's files, functions and test, and a textbook/mutex_test.go
// whose Expected map lists the rows' cases), then the case's own files
// over them. good must pass; every other case must give exactly one
// problem, in docs/hardening.md.
func TestLedgerCatches(t *testing.T) {
	cases := []struct{ dir, want string }{
		{"good", ""},
		{"missing_row", "expected to fail Revoke (textbook/mutex_test.go), but the ledger has no row for it"},
		{"extra_row", "row for Stats, which the textbook lock is not expected to fail"},
		{"unknown_file", "hardening: `lib/gone.go` is not a file of the module"},
		{"unknown_func", "hardening: `Triple`: lib/lib.go declares no func Triple"},
		{"name_without_file", "hardening: `Double` follows no file of the module that could declare it"},
		{"no_function", "hardening: the row names no file and function that fix it"},
		{"test_not_in_test_file", "pinned by: `TestDouble` in lib/lib.go is not a test function in a _test.go file"},
		{"no_test", "pinned by: the row names no test that pins the fix"},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			root := fixture(t, "")
			for _, dir := range []string{"good", tc.dir} {
				overlay(t, root, filepath.Join("testdata", "cases", "ledger", dir))
			}
			wantOneProblem(t, root, ledgerDoc, tc.want)
		})
	}
}
