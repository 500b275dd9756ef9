//go:build !unix

package faulttest

// The pause test needs SIGSTOP and SIGCONT; elsewhere the holder child is
// never started.
const childEnv = "FAULTTEST_CHILD"

func childMain() int { return 2 }
