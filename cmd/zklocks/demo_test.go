package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zktest"
)

// TestDemoFencing runs the demo end to end: holder A is this test binary
// again (TestMain turns it into zklocks), frozen with SIGSTOP until its
// session expires. The fenced store must refuse A's late write and keep
// B's; the unfenced one must lose B's update.
func TestDemoFencing(t *testing.T) {
	servers := "-servers=" + strings.Join(zktest.Servers(t), ",")
	t.Setenv(childEnv, "1") // the child holder runs main()
	code, out, errOut := zklocks(t, "demo", "fencing", servers, "-session=1s")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	assert.Contains(t, out, `fenced:   holds "B's update"`)
	assert.Contains(t, out, `unfenced: holds "A's update"`)
	assert.Contains(t, out, "REFUSED: fence: stale fencing token")
}

func TestDemoRejectsBadInput(t *testing.T) {
	for name, args := range map[string][]string{
		"no demo":       {"demo"},
		"unknown demo":  {"demo", "nope"},
		"short session": {"demo", "fencing", "-session=10ms"},
		"extra args":    {"demo", "fencing", "extra"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := zklocks(t, args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, errOut, "zklocks demo:")
		})
	}
}
