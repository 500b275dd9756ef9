// Command zklocks is the project's command line.
//
//	zklocks ensemble up|down|status   run a local ZooKeeper ensemble
//
// Each subcommand lives in its own file and registers itself in an init
// function, so adding one (bench, inspect, demo) touches no other file.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand of zklocks.
type command struct {
	name    string
	summary string // one line for the usage text
	// run gets the arguments after the subcommand's name. ctx is cancelled
	// on SIGINT or SIGTERM. A usageError makes zklocks exit with status 2.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the dispatch table, filled by register.
var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("zklocks: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "zklocks: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "zklocks %s: %v\n", c.name, err)
		return 2
	default:
		fmt.Fprintf(stderr, "zklocks %s: %v\n", c.name, err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: zklocks <command> [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun zklocks <command> -h for a command's flags.")
}
