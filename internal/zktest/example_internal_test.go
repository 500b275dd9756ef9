package zktest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExportedServersAreLocal(t *testing.T) {
	local.mu.Lock()
	saved := local.exported
	local.exported = "127.0.0.1:1,127.0.0.1:2"
	local.mu.Unlock()
	t.Cleanup(func() {
		local.mu.Lock()
		local.exported = saved
		local.mu.Unlock()
	})

	t.Setenv("ZK_SERVERS", "127.0.0.1:1,127.0.0.1:2")
	assert.Nil(t, external(), "the value MainWithExamples set names the local ensemble")
	t.Setenv("ZK_SERVERS", "127.0.0.1:3")
	assert.Equal(t, []string{"127.0.0.1:3"}, external(), "another value is an external ensemble")
}
