package zkpath

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidateAcceptsOrdinaryPaths(t *testing.T) {
	for _, p := range []string{"/a", "/locks/orders", "/a.b/c..d/.e", "/锁/订单", "/a-b_c:1"} {
		assert.NoError(t, Validate(p), p)
	}
}

func TestValidateRejectsBadPaths(t *testing.T) {
	cases := map[string]string{
		"empty":           "",
		"relative":        "locks/a",
		"root":            "/",
		"trailing slash":  "/locks/",
		"double slash":    "/locks//a",
		"dot segment":     "/locks/./a",
		"dotdot segment":  "/locks/../a",
		"final dot":       "/locks/.",
		"NUL":             "/locks/a\x00b",
		"control char":    "/locks/a\x01b",
		"DEL":             "/locks/a\x7fb",
		"C1 control":      "/locks/a\u0085b",
		"private use":     "/locks/a\ue000b",
		"specials":        "/locks/a\ufff0b",
		"invalid utf8":    "/locks/a\xffb",
		"reserved":        "/zookeeper",
		"reserved child":  "/zookeeper/quota",
		"relative dotdot": "..",
		"2 MiB long":      "/" + strings.Repeat("a", 2<<20),
		"one byte over":   "/" + strings.Repeat("a", MaxLen),
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Error(t, Validate(p))
		})
	}
}

func TestValidateAcceptsAPathOfMaxLen(t *testing.T) {
	assert.NoError(t, Validate("/"+strings.Repeat("a", MaxLen-1)))
}

func TestValidateLengthErrorSaysLengthAndLimit(t *testing.T) {
	err := Validate("/" + strings.Repeat("a", 2<<20))
	if assert.Error(t, err) {
		assert.Equal(t, "path is 2097153 bytes long, more than the 983040 a lock path may have (a server refuses requests over its jute.maxbuffer, about 1 MiB by default)", err.Error())
	}
}

func TestValidateAllowsNamesThatOnlyStartWithZookeeper(t *testing.T) {
	assert.NoError(t, Validate("/zookeeper-locks"))
}

func TestAncestors(t *testing.T) {
	assert.Equal(t, []string{"/a", "/a/b"}, Ancestors("/a/b/c"))
	assert.Empty(t, Ancestors("/a"))
}
