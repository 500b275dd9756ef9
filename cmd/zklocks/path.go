package main

// zklocks path: the code a lock's method runs through.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/zklocks/zklocks/internal/callpath"
)

func init() {
	register(command{name: "path", summary: "print the call tree of a lock's method, down to go-zookeeper", run: runPath})
}

var pathHelp = `usage: zklocks path VARIANT.Type.Method

Prints the static call tree of a lock's method, for example
sequential.Mutex.Lock, semaphore.Semaphore.Unlock or election.Election.Done:
every function of this module that the call can reach, down to and
including the first frame into github.com/go-zookeeper/zk, one a line,
indented by depth, with its file:line (from the module root, or
module@version/file for go-zookeeper) and its length in lines. Each
function is listed once, where it is first called; a later call of it
shows "(seen)", and a call of a func literal declared in it shows
"(func literal)". The standard library and other modules are left out.
The last line is

	total: N lines, F files, K functions

counting each function listed once. The tree is static: it is what the
method can run on any branch (interface calls resolved by variable type
analysis), not what one call does.

VARIANT is one of ` + strings.Join(callpath.Variants, ", ") + `.

It reads the module's source with the go command: run it inside a checkout
of github.com/zklocks/zklocks (the module root, or any directory below it).`

func runPath(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("zklocks path", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, pathHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return usageError{"path takes one VARIANT.Type.Method, such as sequential.Mutex.Lock"}
	}
	if err := callpath.CheckVariant(fs.Arg(0)); err != nil {
		return usageError{err.Error()} // before the seconds of loading
	}
	tree, err := loadTree(fs.Arg(0))
	var nameErr *callpath.NameError
	if errors.As(err, &nameErr) {
		return usageError{err.Error()}
	}
	if err != nil {
		return err
	}
	return tree.Write(stdout)
}

// loadTree loads the module around the working directory and computes
// spec's tree.
func loadTree(spec string) (*callpath.Tree, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := callpath.FindRoot(wd)
	if err != nil {
		return nil, err
	}
	prog, err := callpath.Load(root)
	if err != nil {
		return nil, err
	}
	return prog.Tree(spec)
}
