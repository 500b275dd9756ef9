package main

import (
	"fmt"
	"slices"
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

// gatherWatches asks every listed server for wchp, and for conf, at once.
// Each request is bounded by ensemble.FourLetterTimeout; a server that does
// not answer wchp (down, or wchp not in its 4lw.commands.whitelist) is
// listed in the info's Errors, and the table is then incomplete.
//
// conf tells which member a server is and who the members are, so that a
// member missing from the list (its watches would go uncounted, and the
// counts would look complete) is reported, and a member listed twice is
// counted once. A server that does not answer conf leaves both unchecked.
func gatherWatches(addrs []string) (watchTable, *wchpInfo) {
	outs := make([]string, len(addrs))
	errs := make([]error, len(addrs))
	confs := make([]confInfo, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = ensemble.FourLetter(a, "wchp")
			if errs[i] == nil {
				if out, err := ensemble.FourLetter(a, "conf"); err == nil {
					confs[i] = parseConf(out)
				}
			}
		}()
	}
	wg.Wait()
	t := watchTable{}
	info := &wchpInfo{Members: len(addrs), Errors: []string{}}
	counted := map[string]bool{} // member ids whose wchp is in t
	members := map[string]bool{} // member ids the conf answers list
	for i, out := range outs {
		if errs[i] != nil {
			info.Errors = append(info.Errors, strings.TrimPrefix(errs[i].Error(), "ensemble: "))
			continue
		}
		info.Answered++
		for _, id := range confs[i].members {
			members[id] = true
		}
		if id := confs[i].id; id != "" {
			if counted[id] {
				continue // the same member under another address
			}
			counted[id] = true
		}
		parseWchp(out, t)
	}
	if len(members) > 0 {
		info.EnsembleMembers = ptrTo(len(members))
		if missing := missingMembers(members, counted); len(missing) > info.Members-info.Answered {
			info.Errors = append(info.Errors, fmt.Sprintf("the ensemble has %d members and %s %s not among the servers that answered; list every member in -servers",
				len(members), strings.Join(missing, ", "), isOrAre(len(missing))))
		}
	}
	info.Complete = len(info.Errors) == 0
	return t, info
}

// confInfo is what a server's conf answer says: its own id, and the ids of
// every member of the ensemble (participants and observers).
type confInfo struct {
	id      string
	members []string
}

// parseConf reads the serverId= line and the server.N= lines of a conf
// answer. A standalone server has no server.N lines: it is the only member.
func parseConf(out string) confInfo {
	var c confInfo
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "serverId="); ok {
			c.id = v
		}
		if k, _, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "server.") {
			c.members = append(c.members, strings.TrimPrefix(k, "server."))
		}
	}
	if len(c.members) == 0 && c.id != "" {
		c.members = []string{c.id}
	}
	return c
}

// missingMembers lists, sorted, the members whose watches were not counted.
func missingMembers(members, counted map[string]bool) []string {
	var out []string
	for id := range members {
		if !counted[id] {
			out = append(out, "server."+id)
		}
	}
	slices.Sort(out)
	return out
}

func isOrAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
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
	if info == nil || info.Complete {
		return ""
	}
	return fmt.Sprintf("watch counts unknown (?): %d of %d listed servers answered wchp: %s",
		info.Answered, info.Members, strings.Join(info.Errors, "; "))
}
