// Package zkpath checks lock paths before anything is sent to ZooKeeper and
// creates the missing ancestors of a lock path.
//
// Checking on the client keeps bad input from ever reaching the ensemble:
// a path the server would reject half-way through creating parents would
// otherwise leave those parents behind.
package zkpath

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxLen is the longest lock path Validate accepts, in bytes. ZooKeeper
// sets no limit on a path as such, but a server refuses any packet longer
// than its jute.maxbuffer (0xfffff bytes, just under 1 MiB, by default),
// and every request of a lock carries the path whole. MaxLen keeps 64 KiB
// of that for the rest of the request: its header, the child name the
// queue-based locks append, the node's data and its ACL.
const MaxLen = 1<<20 - 64<<10

// Validate reports why p cannot name a lock, or nil if it can. The rules
// are ZooKeeper's own (absolute, no empty, "." or ".." segments, no control
// or reserved characters) plus three of ours: the root and the server's
// reserved /zookeeper subtree are refused, and so is a path longer than
// MaxLen, which would leave a request too little room under a server's
// default packet limit (or exceed it).
func Validate(p string) error {
	switch {
	case p == "":
		return errors.New("path is empty")
	case len(p) > MaxLen: // before the cases that quote p
		return fmt.Errorf("path is %d bytes long, more than the %d a lock path may have (a server refuses requests over its jute.maxbuffer, about 1 MiB by default)", len(p), MaxLen)
	case p[0] != '/':
		return fmt.Errorf("path %q is not absolute", p)
	case p == "/":
		return errors.New("path is the root")
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("path %q ends with a slash", p)
	case !utf8.ValidString(p):
		return fmt.Errorf("path %q is not valid UTF-8", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		switch seg {
		case "":
			return fmt.Errorf("path %q has an empty segment (//)", p)
		case ".", "..":
			return fmt.Errorf("path %q has a relative segment %q", p, seg)
		}
	}
	for _, r := range p {
		if illegal(r) {
			return fmt.Errorf("path %q contains the illegal character %U", p, r)
		}
	}
	if p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/") {
		return fmt.Errorf("path %q is in the server's reserved /zookeeper subtree", p)
	}
	return nil
}

// illegal mirrors the character ranges ZooKeeper's PathUtils refuses:
// NUL and other control characters, surrogates and private use, and the
// Specials block.
func illegal(r rune) bool {
	return r <= 0x1f ||
		(r >= 0x7f && r <= 0x9f) ||
		(r >= 0xd800 && r <= 0xf8ff) ||
		(r >= 0xfff0 && r <= 0xffff)
}

// Ancestors returns the proper ancestors of a valid path p, outermost
// first: "/a/b/c" gives "/a", "/a/b".
func Ancestors(p string) []string {
	var out []string
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}
