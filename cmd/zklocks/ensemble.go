package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zklocks/zklocks/internal/ensemble"
)

func init() {
	register(command{
		name:    "ensemble",
		summary: "run a local ZooKeeper ensemble: up, down, status",
		run:     runEnsemble,
	})
}

const ensembleUsage = `usage:
  zklocks ensemble up [-size 3] [-tick 200ms] [-fsync=true] [-background] [-state file]
  zklocks ensemble down [-state file]
  zklocks ensemble status [-state file]

up starts a local ensemble from the installed ZooKeeper and prints its
connect string and an "export ZK_SERVERS=..." line. In the foreground (the
default) it runs until Ctrl-C; with -background it keeps running after
zklocks returns, until "zklocks ensemble down". status shows each member's
mode (leader, follower or unreachable) from srvr; without a running local
ensemble it queries ZK_SERVERS.`

func runEnsemble(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"missing up, down or status\n" + ensembleUsage}
	}
	switch args[0] {
	case "up":
		return ensembleUp(ctx, args[1:], stdout, stderr)
	case "down":
		return ensembleDown(args[1:], stdout, stderr)
	case "status":
		return ensembleStatus(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, ensembleUsage)
		return nil
	}
	return usageError{fmt.Sprintf("unknown subcommand %q\n%s", args[0], ensembleUsage)}
}

func newFlagSet(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("zklocks ensemble "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	state := fs.String("state", defaultStatePath(), "state file of the running ensemble")
	return fs, state
}

// parse parses the flags of a command that takes no arguments: it returns
// errHelp after -h (the usage is printed, and the command does nothing
// more) and a usageError for a bad flag or an argument left over.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", fs.Args())}
	}
	return nil
}

var errHelp = errors.New("help shown")

func ensembleUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, state := newFlagSet("up", stderr)
	cfg := ensemble.DefaultConfig()
	fs.IntVar(&cfg.Size, "size", cfg.Size, "number of members")
	fs.DurationVar(&cfg.TickTime, "tick", cfg.TickTime, "ZooKeeper tickTime (session timeouts are 2 to 300 ticks, at most 60s)")
	fs.BoolVar(&cfg.ForceSync, "fsync", cfg.ForceSync, "fsync the transaction log before acknowledging writes (forceSync)")
	fs.BoolVar(&cfg.FullJIT, "full-jit", false, "run the JVMs with the optimising JIT compiler too (slower start, faster steady state)")
	background := fs.Bool("background", false, "keep the ensemble running after zklocks returns")
	foreground := fs.Bool("foreground", false, "run until Ctrl-C (the default)")
	readyFD := fs.Int("ready-fd", 0, "internal: descriptor on which a background child reports readiness")
	if err := parse(fs, args); err != nil {
		return helpIsOK(err)
	}
	if *background && *foreground {
		return usageError{"-background and -foreground exclude each other"}
	}
	if cfg.Size < 1 {
		return usageError{"-size must be at least 1"}
	}
	if err := checkNotRunning(*state); err != nil {
		return err
	}
	if *background {
		return upBackground(ctx, args, *state, stdout)
	}
	var ready *os.File
	if *readyFD > 0 {
		ready = os.NewFile(uintptr(*readyFD), "ready")
		keepToSelf(ready)
	}
	return upForeground(ctx, cfg, *state, stdout, ready)
}

func helpIsOK(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

// upForeground starts the ensemble, writes the state file, and keeps the
// ensemble until ctx is done (Ctrl-C, SIGTERM from "down").
func upForeground(ctx context.Context, cfg ensemble.Config, statePath string, stdout io.Writer, ready *os.File) (err error) {
	if ready != nil {
		defer func() {
			if err != nil {
				fmt.Fprintf(ready, "error: %v\n", err)
			}
			ready.Close()
		}()
	}
	t0 := time.Now()
	e, err := ensemble.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	st := newState(e, os.Getpid(), time.Since(t0))
	if err := writeState(statePath, st); err != nil {
		return err
	}
	defer os.Remove(statePath)
	printUp(stdout, st, statePath)
	if ready != nil {
		fmt.Fprintln(ready, "ok")
		ready.Close()
		ready = nil
	} else {
		fmt.Fprintln(stdout, "running in the foreground; Ctrl-C stops it")
	}
	<-ctx.Done()
	fmt.Fprintln(stdout, "stopping the ensemble")
	return e.Close()
}

func printUp(w io.Writer, st state, statePath string) {
	fmt.Fprintf(w, "ZooKeeper %s: %d members up in %s (tickTime %s, forceSync %v)\n",
		st.Version, len(st.Members), st.StartedIn, st.TickTime, st.ForceSync)
	fmt.Fprintf(w, "connect string: %s\n", st.ConnectString)
	fmt.Fprintf(w, "export ZK_SERVERS=%s\n", st.ConnectString)
	fmt.Fprintf(w, "state file: %s (zklocks ensemble status | down)\n", statePath)
}

// upBackground runs "zklocks ensemble up -foreground" as a detached child
// (its own session, output to a log file next to the state file) and
// returns once the child reports that the ensemble serves. The child owns
// the JVMs; "down" stops it with SIGTERM.
func upBackground(ctx context.Context, args []string, statePath string, stdout io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	logPath := strings.TrimSuffix(statePath, ".json") + ".log"
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	// The user's flags go on to the child, except -background; -state
	// comes last so the one already resolved wins.
	childArgs := []string{"ensemble", "up", "-foreground", "-ready-fd", "3"}
	for _, a := range args {
		if a != "-background" && a != "--background" && a != "-background=true" {
			childArgs = append(childArgs, a)
		}
	}
	childArgs = append(childArgs, "-state", statePath)
	cmd := exec.Command(exe, childArgs...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the child
	detach(cmd)
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start background ensemble: %w", err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	lines := make(chan string, 1)
	go func() {
		// One line: "ok", or "error: ..."; nothing if the child died.
		line, _ := bufio.NewReader(r).ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	select {
	case msg := <-lines:
		if msg != "ok" {
			<-exited
			if msg == "" {
				msg = "the background process exited without a word"
			}
			return fmt.Errorf("%s (log: %s)", strings.TrimPrefix(msg, "error: "), logPath)
		}
	case <-ctx.Done():
		_ = cmd.Process.Signal(os.Interrupt)
		<-exited
		return ctx.Err()
	}
	st, err := readState(statePath)
	if err != nil {
		return err
	}
	printUp(stdout, st, statePath)
	fmt.Fprintf(stdout, "running in the background (pid %d, log %s)\n", st.Supervisor, logPath)
	return nil
}

// checkNotRunning refuses to start a second ensemble over a live state
// file and removes a stale one.
func checkNotRunning(path string) error {
	st, err := readState(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil && supervisorAlive(st) {
		return fmt.Errorf("an ensemble is already running (pid %d, %s); run zklocks ensemble down first",
			st.Supervisor, st.ConnectString)
	}
	return removeState(path)
}

func ensembleDown(args []string, stdout, stderr io.Writer) error {
	fs, statePath := newFlagSet("down", stderr)
	if err := parse(fs, args); err != nil {
		return helpIsOK(err)
	}
	st, err := readState(*statePath)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "no ensemble is running (no %s)\n", *statePath)
		return nil
	}
	if err != nil {
		return err
	}
	if err := stopEnsemble(st, 30*time.Second); err != nil {
		return err
	}
	if err := removeState(*statePath); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ensemble %s stopped\n", st.ConnectString)
	return nil
}

func ensembleStatus(args []string, stdout, stderr io.Writer) error {
	fs, statePath := newFlagSet("status", stderr)
	if err := parse(fs, args); err != nil {
		return helpIsOK(err)
	}
	var addrs []string
	pids := map[string]int{}
	st, err := readState(*statePath)
	switch {
	case err == nil:
		fmt.Fprintf(stdout, "local ensemble (state %s, supervisor pid %d, %s)\n", *statePath, st.Supervisor,
			map[bool]string{true: "running", false: "gone"}[supervisorAlive(st)])
		for _, m := range st.Members {
			addrs = append(addrs, m.Addr)
			pids[m.Addr] = m.PID
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	case os.Getenv("ZK_SERVERS") != "":
		fmt.Fprintln(stdout, "ZK_SERVERS ensemble")
		for _, a := range strings.Split(os.Getenv("ZK_SERVERS"), ",") {
			if a = strings.TrimSpace(a); a != "" {
				addrs = append(addrs, a)
			}
		}
	default:
		return fmt.Errorf("no ensemble: no %s and ZK_SERVERS is not set; start one with zklocks ensemble up", *statePath)
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tADDRESS\tPID\tMODE\tVERSION")
	down := 0
	for i, a := range addrs {
		mode, version := "unreachable", "-"
		if s, err := ensemble.ServerStatus(a); err == nil {
			mode, version = s.Mode, s.Version
			if mode == "" {
				mode = "not serving"
			}
		}
		if mode == "unreachable" || mode == "not serving" {
			down++
		}
		pid := "-"
		if p := pids[a]; p != 0 {
			pid = fmt.Sprint(p)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, a, pid, mode, version)
	}
	tw.Flush()
	if down > 0 {
		return fmt.Errorf("%d of %d members do not serve", down, len(addrs))
	}
	return nil
}
