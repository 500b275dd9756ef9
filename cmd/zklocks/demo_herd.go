package main

// zklocks demo herd: the herd effect, live. The engine is in
// demo_herd_run.go and demo_herd_watch.go; this file is the command line
// and what it prints.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

const herdHelp = `usage: zklocks demo herd [-variant naive|sequential] [-n 8] [-rounds 16] [-hold 200ms] [-servers host:port,...]

Runs n contenders for one lock, each with its own ZooKeeper session, and
prints a line per release: who released, which waiting contenders the
release woke, who holds the lock next and who still waits, with running
counts of the watch notifications the contenders received and of the
writes (transactions) the ensemble made.

  naive       every waiter watches the one lock node, so a release wakes
              all of them; all but one fail to create it again (a failed
              create is a write too) and go back to watching.
  sequential  every waiter watches only its predecessor in the queue, so
              a release wakes exactly one.

Before each release the demo waits until the servers list every waiter's
watch (4lw wchc), so that every count belongs to one release. Servers come
from -servers, else ZK_SERVERS, else the ensemble started by "zklocks
ensemble up"; without any, a local 3-node ensemble is started for the demo
and stopped afterwards. Ctrl-C stops it early, with a summary.
See docs/demo-herd.md.`

// herdMaxContenders bounds -n: each contender is a session of its own.
const herdMaxContenders = 256

// herdMaxNames is the longest list of contenders a line spells out.
const herdMaxNames = 12

func runHerd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newDemoFlags("herd", herdHelp, stderr)
	variant := fs.String("variant", "naive", "the lock: "+strings.Join(herdVariantNames(), " or "))
	n := fs.Int("n", 8, "contenders, each with its own session")
	rounds := fs.Int("rounds", 0, "acquisitions in all (default 2*n)")
	hold := fs.Duration("hold", 200*time.Millisecond, "how long each holder keeps the lock")
	switch err := fs.parse(args); {
	case errors.Is(err, errHelp):
		return nil
	case err != nil:
		return err
	}
	cfg, err := herdFlags(*variant, *n, *rounds, *hold)
	if err != nil {
		return err
	}
	addrs, stop, err := fs.ensemble(ctx, stdout)
	if err != nil {
		return err
	}
	defer stop()
	cfg.Servers = addrs
	log := newDemoLog(stdout)
	printHerdHeader(log, cfg)
	cfg.Report = func(rel herdRelease) { printHerdLine(log, rel) }
	sum, err := playHerd(ctx, cfg)
	switch {
	case err != nil && ctx.Err() == nil:
		return err
	case err != nil:
		log.printf("\nInterrupted after %d releases.\n", len(sum.Releases))
	}
	printHerdSummary(log, sum)
	return nil
}

// herdFlags checks the flags and makes the run's configuration.
func herdFlags(variant string, n, rounds int, hold time.Duration) (herdConfig, error) {
	if _, err := lookupHerdVariant(variant); err != nil {
		return herdConfig{}, usageError{"-variant: " + err.Error()}
	}
	switch {
	case n < 1 || n > herdMaxContenders:
		return herdConfig{}, usageError{fmt.Sprintf("-n must be from 1 to %d, not %d", herdMaxContenders, n)}
	case rounds < 0:
		return herdConfig{}, usageError{fmt.Sprintf("-rounds must not be negative, not %d", rounds)}
	case hold < 0:
		return herdConfig{}, usageError{fmt.Sprintf("-hold must not be negative, not %v", hold)}
	case rounds == 0:
		rounds = 2 * n
	}
	return herdConfig{Variant: variant, Contenders: n, Acquisitions: rounds, Hold: hold, Session: 10 * time.Second}, nil
}

func printHerdHeader(log *demoLog, cfg herdConfig) {
	log.printf("\nThe %s lock, %d contenders (c1..c%d, one session each), %d acquisitions, each held %v.\n",
		cfg.Variant, cfg.Contenders, cfg.Contenders, cfg.Acquisitions, cfg.Hold)
	log.printf("One line per release. Look at \"woken\": which of the waiting contenders the release\n")
	log.printf("woke up. \"notifications\" counts the watch events the contenders' sessions received\n")
	log.printf("(every release also tells the releaser about its own node: 1 per release, no wake-up);\n")
	log.printf("\"writes\" counts the transactions the leader proposed (mntr zk_proposal_count).\n")
	log.printf("Both are running totals, with this release's share in brackets.\n\n")
	log.reset()
}

func printHerdLine(log *demoLog, rel herdRelease) {
	next := "nobody holds"
	if rel.Holder >= 0 {
		next = herdName(rel.Holder) + " holds"
	}
	if rel.Round == 0 {
		log.say("%s; waiting: %s | notifications %d  writes %d", next, herdNames(rel.Queue), rel.TotalEvents, rel.TotalWrites)
		return
	}
	log.say("#%-3d %s released -> woken: %s (%d of %d waiting) -> %s; waiting: %s | notifications %d (+%d)  writes %d (+%d)",
		rel.Round, herdName(rel.Releaser), herdNames(rel.Woken), len(rel.Woken), len(rel.Waiting),
		next, herdNames(rel.Queue), rel.TotalEvents, rel.Events, rel.TotalWrites, rel.Server.Proposals)
}

func herdName(i int) string { return fmt.Sprintf("c%d", i+1) }

// herdNames spells out a short list of contenders and counts a long one.
func herdNames(ids []int) string {
	switch {
	case len(ids) == 0:
		return "nobody"
	case len(ids) > herdMaxNames:
		return fmt.Sprintf("%d contenders", len(ids))
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = herdName(id)
	}
	return strings.Join(names, " ")
}

func printHerdSummary(log *demoLog, s herdSummary) {
	r := len(s.Releases)
	if r == 0 {
		log.printf("\nNo release completed.\n")
		return
	}
	per := func(x int64) float64 { return float64(x) / float64(r) }
	var waiting, woken, own, exact int64
	for _, rel := range s.Releases {
		waiting += int64(len(rel.Waiting))
		woken += int64(len(rel.Woken))
		own += rel.OwnEvents
		if int64(rel.Watching) == rel.Events {
			exact++
		}
	}
	log.printf("\nSummary: the %s lock, %d contenders, %d acquisitions and releases (lock %s)\n",
		s.Variant, s.Contenders, r, s.Path)
	log.printf("  waiting at a release        %5.2f on average (%d while all queue, fewer as the run drains)\n",
		per(waiting), s.Contenders-1)
	log.printf("  woken per release           %5.2f %s\n", per(woken), herdWokenNote(s.Variant))
	log.printf("  notifications per release   %5.2f = %.2f wake-ups + %.2f to the releaser about its own node\n",
		per(s.Events), per(s.Events-own), per(own))
	log.printf("  watchers fired per release  %5.2f the servers' count (mntr zk_sum_*_watch_count, all members)\n",
		per(s.Server.WatchersFired))
	log.printf("  writes per acquisition      %5.2f the leader's count (mntr zk_proposal_count): %s\n",
		per(s.Server.Proposals), herdWritesNote(s.Variant))
	log.printf("  the locks' own count        %5.2f notifications per release (Stats: wake-ups only)\n",
		per(s.Notifications))
	log.printf("Before each release the servers listed (4lw wchc) the watches on the node about to go;\n")
	log.printf("the release delivered exactly that many events in %d of %d releases.\n", exact, r)
	if s.Server.WatchersFired != s.Events {
		log.printf("The servers fired %d watchers and the contenders received %d events: other clients\n", s.Server.WatchersFired, s.Events)
		log.printf("of this ensemble were at work during the run, and the servers count theirs too.\n")
	}
	log.printf("\n%s\n", herdCompare(s))
}

func herdWokenNote(variant string) string {
	if variant == "naive" {
		return "every waiter, on every release: the herd"
	}
	return "the next in line only"
}

func herdWritesNote(variant string) string {
	if variant == "naive" {
		return "create + delete, and a failed create\n" +
			"                                    (NodeExists: a logged transaction too) for every woken waiter that lost"
	}
	return "create + delete, nothing else"
}

func herdCompare(s herdSummary) string {
	if s.Variant == "naive" {
		return fmt.Sprintf("Compare: zklocks demo herd -variant sequential -n %d (one waiter woken per release).", s.Contenders)
	}
	return fmt.Sprintf("Compare: zklocks demo herd -variant naive -n %d (every waiter woken on every release).", s.Contenders)
}
