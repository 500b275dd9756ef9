package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// zklocks path reads the module's source from the test's directory, below
// the module root; it needs no ZooKeeper.
func TestPathPrintsTheTree(t *testing.T) {
	code, out, errOut := zklocks(t, "path", "sequential.Mutex.Token")
	assert.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(out, "sequential.Mutex.Token  sequential/mutex.go:"), out)
	assert.Contains(t, out, "\n  lockq.Slot.Token  internal/lockq/slot.go:")
	assert.Regexp(t, regexp.MustCompile(`\ntotal: \d+ lines, \d+ files, \d+ functions\n$`), out)
}

// Bad input is a usage error (exit status 2) that says what there is.
func TestPathRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"path"}, "path takes one VARIANT.Type.Method"},
		{[]string{"path", "sequential.Mutex.Lock", "extra"}, "path takes one VARIANT.Type.Method"},
		{[]string{"path", "optimistic.Mutex.Lock"}, `unknown variant "optimistic" in "optimistic.Mutex.Lock"; the variants are naive, sequential, reentrant`},
		{[]string{"path", "semaphore.Semaphore.Lokc"}, `semaphore has no function or method "Semaphore.Lokc"; it has `},
		{[]string{"path", "-depth=2", "sequential.Mutex.Lock"}, "flag provided but not defined: -depth"},
	} {
		code, out, errOut := zklocks(t, tc.args...)
		assert.Equal(t, 2, code, "%v", tc.args)
		assert.Empty(t, out, "%v", tc.args)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
	}
	code, _, errOut := zklocks(t, "path", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, errOut, "run it inside a checkout")
}
