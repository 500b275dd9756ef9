package fence_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/fence"
)

func TestFencedRejectsOlderTokens(t *testing.T) {
	s, err := fence.Create(filepath.Join(t.TempDir(), "store.json"), fence.Fenced)
	require.NoError(t, err)

	require.NoError(t, s.Write(10, "A", "a1"))
	require.NoError(t, s.Write(10, "A", "a2"), "the same hold writes again")
	require.NoError(t, s.Write(12, "B", "b1"))
	err = s.Write(10, "A", "a3")
	require.ErrorIs(t, err, fence.ErrStaleToken)
	assert.Contains(t, err.Error(), "token 10, the store has seen 12")
	require.ErrorIs(t, s.Write(0, "C", "c"), fence.ErrNoToken)
	require.ErrorIs(t, s.Write(-1, "C", "c"), fence.ErrNoToken)

	st, err := s.State()
	require.NoError(t, err)
	assert.Equal(t, "b1", st.Value)
	assert.Equal(t, int64(12), st.MaxToken)
	assert.Equal(t, []fence.Attempt{
		{Token: 10, Writer: "A", Value: "a1", Accepted: true},
		{Token: 10, Writer: "A", Value: "a2", Accepted: true},
		{Token: 12, Writer: "B", Value: "b1", Accepted: true},
		{Token: 10, Writer: "A", Value: "a3"},
		{Token: 0, Writer: "C", Value: "c"},
		{Token: -1, Writer: "C", Value: "c"},
	}, st.Log)
}

func TestUnfencedAcceptsEverything(t *testing.T) {
	s, err := fence.Create(filepath.Join(t.TempDir(), "store.json"), fence.Unfenced)
	require.NoError(t, err)
	require.NoError(t, s.Write(12, "B", "b1"))
	require.NoError(t, s.Write(10, "A", "a1"), "the lost update: nothing stops the stale writer")
	require.NoError(t, s.Write(0, "C", "c"))
	st, err := s.State()
	require.NoError(t, err)
	assert.Equal(t, "c", st.Value)
	assert.Equal(t, int64(12), st.MaxToken)
	assert.Len(t, st.Log, 3)
	for _, a := range st.Log {
		assert.True(t, a.Accepted)
	}
}

func TestCreateAndOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.json")
	_, err := fence.Open(path)
	require.Error(t, err, "no store yet")
	_, err = fence.Create(path, fence.Mode(0))
	require.Error(t, err)

	s, err := fence.Create(path, fence.Fenced)
	require.NoError(t, err)
	require.NoError(t, s.Write(5, "A", "x"))
	o, err := fence.Open(path)
	require.NoError(t, err)
	require.ErrorIs(t, o.Write(4, "B", "y"), fence.ErrStaleToken, "the state is in the file")
	assert.Equal(t, path, o.Path())

	s, err = fence.Create(path, fence.Unfenced)
	require.NoError(t, err, "Create replaces")
	st, err := s.State()
	require.NoError(t, err)
	assert.Equal(t, fence.State{Mode: fence.Unfenced}, st)
	assert.Equal(t, "unfenced", st.Mode.String())
}

// Writers with stores of their own on one file (as separate processes
// would have) are serialised by the file lock: no attempt is lost and the
// largest token wins.
func TestConcurrentWritersShareTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.json")
	_, err := fence.Create(path, fence.Fenced)
	require.NoError(t, err)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for w := range writers {
		s, err := fence.Open(path)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				tok := int64(i*writers + w + 1)
				err := s.Write(tok, fmt.Sprint("w", w), fmt.Sprint(tok))
				if err != nil && !errors.Is(err, fence.ErrStaleToken) {
					t.Error(err)
				}
				if err == nil {
					mu.Lock()
					accepted++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	st, err := fence.Open(path)
	require.NoError(t, err)
	state, err := st.State()
	require.NoError(t, err)
	assert.Len(t, state.Log, writers*each, "every attempt is logged")
	assert.Equal(t, int64(writers*each), state.MaxToken)
	assert.Equal(t, fmt.Sprint(writers*each), state.Value)
	var max int64
	n := 0
	for _, a := range state.Log {
		if a.Accepted {
			n++
			assert.GreaterOrEqual(t, a.Token, max, "accepted tokens never go down")
			max = a.Token
		}
	}
	assert.Equal(t, accepted, n)
}
