package lockq

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseSeq(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  int32
		ok   bool
	}{
		{"_c_0123456789abcdef0123456789abcdef-lock-0000000000", 0, true},
		{"_c_0123456789abcdef0123456789abcdef-lock-0000000042", 42, true},
		{"_c_1b4e28ba-2fa1-11d2-883f-0016d3cca427-lock-0000000007", 7, true}, // Curator
		{"0123456789abcdef0123456789abcdef__lock__0000000009", 9, true},      // kazoo
		{"lock-0000000003", 3, true},                                         // go-zookeeper, unprotected
		{"0000000005", 5, true},                                              // bare sequence
		{"x-lock-2147483647", math.MaxInt32, true},
		{"x__lock__1000000000", 1000000000, true},
		{"lock-1000000000", 1000000000, true},
		// Past 2^31-1 ZooKeeper's counter is negative, printed with %010d:
		// the sign takes one of the ten places, or an eleventh.
		{"x-lock--2147483648", math.MinInt32, true},
		{"x-lock--2147483647", -2147483647, true},
		{"x__lock__-2147483647", -2147483647, true},
		{"x-lock--1000000000", -1000000000, true},
		{"x-lock--999999999", -999999999, true},
		{"x-lock--000000001", -1, true},
		{"x__lock__-000000123", -123, true},
		// Not contenders.
		{"config", 0, false},
		{"x-lock-", 0, false},
		{"x-lock-12345", 0, false},
		{"x-lock-000000001x", 0, false},
		{"x-lock-2147483648", 0, false}, // not a value ZooKeeper prints
		{"x-lock-9999999999", 0, false},
		{"x-lock--2147483649", 0, false},
		{"x-lock--0999999999", 0, false}, // -999999999 fits in ten characters
		{"x-lock--000000000", 0, false},
		{"x-lock-+000000001", 0, false},
		{"", 0, false},
	} {
		seq, ok := ParseSeq(tc.name)
		assert.Equal(t, tc.ok, ok, tc.name)
		assert.Equal(t, tc.seq, seq, tc.name)
	}
}

// Names as ZooKeeper makes them: the prefix plus the counter with %010d.
func names(prefix string, seqs ...int32) []string {
	var out []string
	for _, s := range seqs {
		out = append(out, fmt.Sprintf("%s%010d", prefix, s))
	}
	return out
}

func seqs(q []Entry) []int32 {
	var out []int32
	for _, e := range q {
		out = append(out, e.Seq)
	}
	return out
}

func TestSortQueue(t *testing.T) {
	t.Run("MixedForms", func(t *testing.T) {
		kids := []string{
			"_c_aa-lock-0000000012",
			"config",
			"bb__lock__0000000010",
			"_c_cc-lock-0000000011",
			"lock-0000000009",
		}
		q := Sort(kids)
		assert.Equal(t, []string{"lock-0000000009", "bb__lock__0000000010", "_c_cc-lock-0000000011", "_c_aa-lock-0000000012"},
			[]string{q[0].Name, q[1].Name, q[2].Name, q[3].Name})
	})
	t.Run("Empty", func(t *testing.T) {
		assert.Empty(t, Sort(nil))
		assert.Empty(t, Sort([]string{"config", "other"}))
	})
	// The counter wraps from 2^31-1 to -2^31: the nodes created after the
	// wrap are the newest and must come last, in any listing order.
	t.Run("AcrossTheWrap", func(t *testing.T) {
		want := []int32{math.MaxInt32 - 2, math.MaxInt32 - 1, math.MaxInt32, math.MinInt32, math.MinInt32 + 1, math.MinInt32 + 2}
		for _, listed := range [][]int32{
			{math.MinInt32, math.MaxInt32, math.MinInt32 + 2, math.MaxInt32 - 2, math.MinInt32 + 1, math.MaxInt32 - 1},
			{math.MinInt32 + 2, math.MinInt32 + 1, math.MinInt32, math.MaxInt32, math.MaxInt32 - 1, math.MaxInt32 - 2},
			{math.MaxInt32 - 2, math.MaxInt32 - 1, math.MaxInt32, math.MinInt32, math.MinInt32 + 1, math.MinInt32 + 2},
		} {
			q := Sort(names("_c_g-lock-", listed...))
			assert.Equal(t, want, seqs(q), "listed as %v", listed)
		}
	})
	// Across zero (-1 to 0, after 2^32 creates) the order is plain.
	t.Run("AcrossZero", func(t *testing.T) {
		q := Sort(names("_c_g-lock-", 1, -1, 0, -2))
		assert.Equal(t, []int32{-2, -1, 0, 1}, seqs(q))
	})
	// The documented limit: a queue spanning 2^31 or more creates (a node
	// that stays while two billion others come and go) has no consistent
	// order. Just inside the limit the order is still right.
	t.Run("Limit", func(t *testing.T) {
		oldest := int32(-5)
		newest := oldest + math.MaxInt32 // 2^31-1 creates later
		q := Sort(names("_c_g-lock-", newest, oldest, oldest+1))
		assert.Equal(t, []int32{oldest, oldest + 1, newest}, seqs(q))
	})
}

func TestNamedFor(t *testing.T) {
	g := newGUID()
	for _, sep := range []string{LockSep, "-__READ__", "-__WRIT__", "-latch-"} {
		assert.True(t, NamedFor(ProtectedPrefix+g+sep+"0000000001", g), sep)
	}
	assert.False(t, NamedFor(ProtectedPrefix+newGUID()+LockSep+"0000000001", g), "another acquisition's")
	assert.False(t, NamedFor("_c_1b4e28ba-2fa1-11d2-883f-0016d3cca427-lock-0000000001", g), "Curator's")
	assert.False(t, NamedFor("0123__lock__0000000001", g), "kazoo's")
	assert.False(t, NamedFor("lock-0000000001", g), "go-zookeeper's")
	assert.False(t, NamedFor(ProtectedPrefix+g, g), "no separator")
}

// Only keeps the nodes that block a contender, in queue order, also when
// the counter wraps between them: the wait of a read-write lock's reader.
func TestLineOnlyAcrossTheCounterWrap(t *testing.T) {
	isWriter := func(name string) bool { return strings.Contains(name, "-w-") }
	kids := []string{
		fmt.Sprintf("_c_a-w-%010d", int32(math.MaxInt32-1)),
		fmt.Sprintf("_c_b-r-%010d", int32(math.MaxInt32)),
		fmt.Sprintf("_c_c-w-%010d", int32(math.MinInt32)),
		fmt.Sprintf("_c_d-r-%010d", int32(math.MinInt32+1)),
	}
	l := Line{dir: "/l", ahead: Sort(kids)[:3]} // as seen from the last node
	l.Ahead, l.Head, l.Pred = 3, "/l/"+kids[0], "/l/"+kids[2]

	w := l.Only(isWriter)
	assert.Equal(t, 2, w.Ahead, "writers ahead")
	assert.Equal(t, "/l/"+kids[0], w.Head, "the first writer, before the wrap")
	assert.Equal(t, "/l/"+kids[2], w.Pred, "the closest writer, after the wrap")
	assert.False(t, w.Second())

	none := l.Only(func(string) bool { return false })
	assert.True(t, none.First(), "nothing that blocks: as good as first")
	assert.Empty(t, none.Pred)
	assert.Equal(t, l, l.Only(nil), "nil keeps every node")
}
