package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/zklocks/zklocks/internal/ensemble"
)

// Watch counts come from the servers, not from the clients: a watch lives
// on the server its session is connected to, so the four-letter command
// wchp is sent to every member and the answers are added up. ZooKeeper
// prints wchp as each watched path on a line of its own followed by the
// sessions watching it, one per indented line, first for data watches
// (getData, exists) and then, after a blank line, for child watches.

// watchTable maps a path to the sessions watching it, one entry per watch.
type watchTable map[string][]string

// gatherWatches asks every member for wchp at once. Each request is
// bounded by ensemble.FourLetterTimeout; a member that does not answer
// (down, or wchp not in its 4lw.commands.whitelist) is listed in the
// info's Errors, and the table is then incomplete.
func gatherWatches(addrs []string) (watchTable, *wchpInfo) {
	outs := make([]string, len(addrs))
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = ensemble.FourLetter(a, "wchp")
		}()
	}
	wg.Wait()
	t := watchTable{}
	info := &wchpInfo{Members: len(addrs), Errors: []string{}}
	for i, out := range outs {
		if errs[i] != nil {
			info.Errors = append(info.Errors, strings.TrimPrefix(errs[i].Error(), "ensemble: "))
			continue
		}
		info.Answered++
		parseWchp(out, t)
	}
	return t, info
}

// parseWchp adds one server's wchp answer to t.
func parseWchp(out string, t watchTable) {
	path := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "/"):
			path = line
		case path != "" && (strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " ")):
			if s := strings.TrimSpace(line); s != "" {
				t[path] = append(t[path], s)
			}
		default:
			path = "" // the blank line between the sections, or a summary
		}
	}
}

// applyWatches fills in the watch counts of a lock from t. With an
// incomplete table the counts stay nil: a partial count would look like
// a real one.
func applyWatches(l *lockView, t watchTable, complete bool) {
	if !complete {
		return
	}
	total := 0
	if l.Layout == nil || *l.Layout != layoutNode {
		// Watches on the lock path itself: a child watch on a queue, or
		// an exists watch waiting for a missing path to be created.
		total = len(t[l.Path])
	}
	for i := range l.Contenders {
		c := &l.Contenders[i]
		c.WatcherSessions = append([]string{}, t[c.Node]...)
		c.Watchers = ptrTo(len(c.WatcherSessions))
		total += *c.Watchers
	}
	l.WatchersTotal = ptrTo(total)
}

// wchpNote explains watch counts shown as "?", or returns "".
func wchpNote(info *wchpInfo) string {
	if info == nil || info.Answered == info.Members {
		return ""
	}
	return fmt.Sprintf("watch counts unknown (?): %d of %d members answered wchp: %s",
		info.Answered, info.Members, strings.Join(info.Errors, "; "))
}
