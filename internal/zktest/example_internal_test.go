package zktest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMaySelect(t *testing.T) {
	names := []string{"ExampleMutex_Lock", "ExampleContenders"}
	for _, tc := range []struct {
		run  string
		want bool
	}{
		{"", true},
		{"Example", true},
		{"^ExampleContenders$", true},
		{"Lock$", true},
		{"TestA|ExampleMutex_Lock", true},
		{"TestA/sub|Contenders", true},
		{"/sub", true}, // an empty first element matches every name
		{"(TestA|TestB)", true},
		{"^Test", false},
		{"^(Test|Fuzz)", true}, // cut inside (...): not judged
		{"TestLock/ExampleX", false},
	} {
		assert.Equal(t, tc.want, maySelect(tc.run, names), "-run %q", tc.run)
	}
	assert.False(t, maySelect("", nil), "a package without Examples")
}

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
