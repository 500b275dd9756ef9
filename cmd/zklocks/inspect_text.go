package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// The text output: one block per lock path, a title line and a table, then
// notes about anything that could not be measured.

// printReport writes r as text.
func printReport(w io.Writer, r *report) {
	for _, l := range r.Locks {
		printLock(w, l, r.Wchp != nil)
	}
	for _, note := range []string{r.clockNote, wchpNote(r.Wchp)} {
		if note != "" {
			fmt.Fprintf(w, "note: %s\n", note)
		}
	}
}

func printLock(w io.Writer, l lockView, askedWatchers bool) {
	if !l.Exists {
		fmt.Fprintf(w, "%s: no such lock (nobody holds or waits)%s\n\n", l.Path, watchSummary(l, askedWatchers))
		return
	}
	clock := ""
	if l.NowMs != nil {
		clock = "; ensemble clock " + time.UnixMilli(*l.NowMs).UTC().Format("2006-01-02 15:04:05.000 MST")
	}
	if len(l.Contenders) == 0 {
		fmt.Fprintf(w, "%s: free (no contenders)%s%s\n\n", l.Path, watchSummary(l, askedWatchers), clock)
		return
	}
	state := fmt.Sprintf("held by #0, %d waiting", len(l.Contenders)-1)
	if *l.Layout == layoutNode {
		state = "held (naive layout: waiters have no node, they only watch this one)"
	}
	fmt.Fprintf(w, "%s: %s%s%s\n", l.Path, state, watchSummary(l, askedWatchers), clock)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tROLE\tKIND\tNODE\tSEQ\tTOKEN\tSESSION\tAGE\tWRITTEN\tWATCHERS\tDATA")
	for _, c := range l.Contenders {
		seq := "-"
		if c.Seq != nil {
			seq = fmt.Sprint(*c.Seq)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", c.Index, c.Role, c.Kind,
			strings.TrimPrefix(c.Node, l.Path+"/"), seq, c.Token, c.Session, age(c), ms(c.WrittenMsAgo),
			count(c.Watchers, askedWatchers), describe(c))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// watchSummary is the title's word on watches, "" when not asked.
func watchSummary(l lockView, asked bool) string {
	switch {
	case !asked:
		return ""
	case l.WatchersTotal == nil:
		return "; ? watches"
	case *l.WatchersTotal == 1:
		return "; 1 watch"
	}
	return fmt.Sprintf("; %d watches", *l.WatchersTotal)
}

// age is the time since the node was created. For a waiter that is how
// long it has waited. A holder in a queue waited before it held, and
// ZooKeeper does not record when it took over, so its age is an upper
// bound of its hold: "<=". The naive lock's node is created by the
// acquisition itself, so its age is the hold's.
func age(c contenderView) string {
	s := ms(c.CreatedMsAgo)
	if c.Role == roleHolds && c.Seq != nil && c.CreatedMsAgo != nil {
		s = "<=" + s
	}
	return s
}

// ms prints a duration in milliseconds, "-" when unknown.
func ms(v *int64) string {
	if v == nil {
		return "-"
	}
	return (time.Duration(*v) * time.Millisecond).String()
}

func count(v *int, asked bool) string {
	switch {
	case !asked:
		return "-"
	case v == nil:
		return "?"
	}
	return fmt.Sprint(*v)
}

// maxData bounds the data column of the text output.
const maxData = 60

// describe shows what a contender stored, decoded where the kind is known.
func describe(c contenderView) string {
	switch {
	case c.Owner != nil:
		o := c.Owner
		s := fmt.Sprintf("owner=%s host=%s pid=%d mode=%s", o.Owner, o.Host, o.PID, o.Mode)
		if o.Count != nil {
			s += fmt.Sprintf(" count=%d", *o.Count)
		}
		return s
	case c.Lease != nil:
		return describeLease(c)
	case c.RevokeRequested:
		return *c.Data + " (revocation requested: the holder is asked to give the lock up)"
	case c.Data == nil:
		return fmt.Sprintf("(%d bytes, not text)", c.DataBytes)
	case *c.Data == "":
		return "-"
	case len([]rune(*c.Data)) > maxData:
		return string([]rune(*c.Data)[:maxData-3]) + "..."
	}
	return *c.Data
}

func describeLease(c contenderView) string {
	l := c.Lease
	s := fmt.Sprintf("lease=%v", time.Duration(l.Ms)*time.Millisecond)
	switch {
	case !l.Held && c.Role == roleWaits:
		return s + " (runs once it holds)"
	case !l.Held:
		return s + " (not stamped yet)"
	case l.Expired == nil:
		return s + " held"
	case *l.Expired:
		return s + " held, EXPIRED " + ms(ptrTo(-*l.RemainingMs)) + " ago (a waiter may evict it)"
	}
	return s + " held, " + ms(l.RemainingMs) + " left"
}
