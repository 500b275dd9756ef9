package main

// zklocks revoke: ask the holder of a sequential lock to give it up.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/zklocks/zklocks/sequential"
)

func init() {
	register(command{name: "revoke", summary: "ask the holder of a lock to give it up (cooperative)", run: runRevoke})
}

const revokeHelp = `usage: zklocks revoke [-servers host:port,...] [-timeout 10s] /lock/path

Asks the current holder of the lock at the path to give it up: writes a
revocation request into the holder's node, which a sequential.Mutex sees
through Revoked() (and a revocable Curator InterProcessMutex through its
RevocationListener: the request is the same bytes). Nothing is taken by
force; a holder that ignores the request keeps the lock. Prints the
holder's node. Exits with an error when nobody holds the lock.`

func runRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("zklocks revoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	statePath := fs.String("state", defaultStatePath(), "state file of a local ensemble started by zklocks ensemble up")
	servers := fs.String("servers", "", "comma-separated host:port list (default: ZK_SERVERS, else the local ensemble's state file)")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after this long")
	fs.Usage = func() { fmt.Fprintln(stderr, revokeHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return usageError{"revoke takes one lock path"}
	}
	if *timeout <= 0 {
		return usageError{"-timeout must be positive"}
	}
	addrs, err := inspectServers(*servers, *statePath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	s, err := connect(ctx, addrs, *timeout)
	if err != nil {
		return err
	}
	defer s.Close()
	node, err := sequential.Revoke(ctx, s, fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "asked the holder of %s to give it up: %s\n", fs.Arg(0), node)
	return nil
}
