package faulttest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/zktest"
)

// Load: 64 contenders, each with its own session, on 4 lock paths (16 per
// path), cycling until at least 2,000 acquisitions per variant; every
// path's history checked, nothing left behind.
func TestLoad(t *testing.T) {
	const (
		contenders = 64
		paths      = 4
		target     = 2000
	)
	forEachVariant(t, func(t *testing.T, v *variant) {
		tp := newTape()
		var ps []string
		for range paths {
			ps = append(ps, zktest.LockPath(t))
		}
		var clients []*client
		for i := range contenders {
			// Long sessions: no fault here, and fewer pings (one every
			// third of the timeout) leave the CPU to the locks.
			clients = append(clients, newClient(t, tp, v, ps[i%paths], fmt.Sprintf("c%02d", i), withTimeout(10*time.Second)))
		}
		admin := zktest.Connect(t)
		start := time.Now()
		// naive is unfair: a contender can lose many races in a row.
		cy := startCycler(tp, clients, 0, 2*time.Minute)
		deadline := time.Now().Add(2 * time.Minute)
		for cy.total() < target && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cy.stop()
		took := time.Since(start)
		total := cy.total()
		if total < target {
			t.Errorf("%d acquisitions in %v; want %d", total, took, target)
		}
		if s := cy.errorSummary(); s != "" {
			t.Errorf("errors under load, with no fault injected:\n%s", s)
		}
		holds, double, left := 0, 0, 0
		for _, p := range ps {
			h, d, _ := checkHistory(t, tp, v, p)
			holds += h
			double += d
			left += nodesLeft(t, admin, v, p, 10*time.Second)
		}
		report{fault: "load", variant: v.name, holds: holds, double: double, left: left, recover: -1,
			extra: []string{
				fmt.Sprintf("contenders=%d paths=%d", contenders, paths),
				"took=" + took.Round(time.Millisecond).String(),
				fmt.Sprintf("rate=%.0f/s", float64(total)/took.Seconds()),
			}}.log(t)
	})
}

// Soak: every variant under load (16 contenders on 2 paths each, all
// with cuttable connections) while faults come one after another: leader
// killed and restarted, a follower killed and restarted, a quarter of the
// clients cut off until their sessions expire, the leader and then a
// follower cut off from the other members (split brain between the
// servers), every member link slowed, the whole ensemble stopped for
// three seconds. It runs on an ensemble of its own whose member links go
// through proxies. By default each fault comes once (about a minute);
// -soak=10m keeps them coming for that long. Each history is checked at
// the end, and every contender must have acquired after the last fault.
func TestSoak(t *testing.T) {
	e := proxiedEnsemble(t) // of its own: the soak cuts links between its members
	servers := e.Servers()
	tp := newTape()
	type load struct {
		v       *variant
		paths   []string
		clients []*client
		cy      *cycler
	}
	var loads []*load
	var all []*client
	for _, v := range withRungs() {
		l := &load{v: v, paths: []string{zktest.LockPath(t), zktest.LockPath(t)}}
		for i := range 16 {
			c := newClient(t, tp, v, l.paths[i%2], fmt.Sprintf("%s-%02d", v.name, i), withTimeout(expiryTimeout), withCutter(),
				withServers(servers...))
			l.clients = append(l.clients, c)
			all = append(all, c)
		}
		loads = append(loads, l)
	}
	for _, l := range loads {
		l.cy = startCycler(tp, l.clients, l.v.holdOf(2*time.Millisecond), 10*time.Second)
	}
	t.Cleanup(func() {
		for _, l := range loads {
			l.cy.stop()
		}
	})
	// bounce SIGKILLs member i, leaves it down for a while, and restarts it.
	bounce := func(i int, err error) error {
		if err != nil {
			return err
		}
		if err := e.Kill(i); err != nil {
			return err
		}
		time.Sleep(3 * time.Second)
		return e.Restart(i)
	}
	// isolate cuts member i off from the other two for a while, then heals.
	isolate := func(i int, err error) error {
		if err != nil {
			return err
		}
		others := slices.DeleteFunc([]int{0, 1, 2}, func(j int) bool { return j == i })
		if err := e.Partition([]int{i}, others); err != nil {
			return err
		}
		time.Sleep(4 * time.Second)
		return e.Heal()
	}
	faults := []struct {
		name string
		do   func() error
	}{
		{"kill leader", func() error { return bounce(e.Leader()) }},
		{"kill follower", func() error { return bounce(aFollower(e, -1)) }},
		{"cut a quarter of the clients past their session timeout", func() error {
			cut := rand.Perm(len(all))[:len(all)/4]
			for _, i := range cut {
				all[i].cut.Cut()
			}
			time.Sleep(2*expiryTimeout + tick)
			for _, i := range cut {
				all[i].cut.Heal()
			}
			return nil
		}},
		{"cut the leader off from the followers for 4s", func() error { return isolate(e.Leader()) }},
		{"cut a follower off from the others for 4s", func() error { return isolate(aFollower(e, -1)) }},
		{"slow every member link by 10ms each way for 5s", func() error {
			for _, pair := range [][2]int{{0, 1}, {0, 2}, {1, 2}} {
				if err := e.SlowLink(pair[0], pair[1], 10*time.Millisecond); err != nil {
					return err
				}
			}
			time.Sleep(5 * time.Second)
			return e.Heal()
		}},
		{"stop the whole ensemble for 3s", func() error {
			for i := range e.Size() {
				if err := e.Stop(i); err != nil {
					return err
				}
			}
			time.Sleep(3 * time.Second)
			return e.StartStopped()
		}},
	}
	end := time.Now().Add(*soak)
	n := 0
	for n < len(faults) || time.Now().Before(end) {
		time.Sleep(5 * time.Second)
		f := faults[n%len(faults)]
		n++
		at := tp.now()
		if err := f.do(); err != nil {
			t.Fatalf("fault %q: %v", f.name, err)
		}
		t.Logf("%v: %s (done at %v)", at.Round(time.Second), f.name, tp.now().Round(time.Millisecond))
	}
	lastFault := tp.now()
	for _, l := range loads {
		l.cy.waitAll(t, lastFault, 30*time.Second)
	}
	admin := zktest.Connect(t, zktest.WithServers(servers))
	for _, l := range loads {
		l.cy.stop()
	}
	for _, l := range loads {
		holds, double, left := 0, 0, 0
		var belief time.Duration
		for _, p := range l.paths {
			h, d, b := checkHistory(t, tp, l.v, p)
			holds, double, belief = holds+h, double+d, max(belief, b)
			k := nodesLeft(t, admin, l.v, p, expiryTimeout+2*time.Second)
			if k > 0 {
				names, _ := lockNodes(admin, l.v, p)
				explainLeftovers(t, e, tp, l.v, l.clients, p, names)
			}
			left += k
		}
		report{fault: "soak", variant: l.v.name, holds: holds, double: double, left: left, recover: -1, belief: belief,
			extra: []string{"duration=" + tp.now().Round(time.Second).String(), fmt.Sprintf("faults=%d", n)}}.log(t)
		if s := l.cy.errorSummary(); s != "" {
			t.Logf("%s: errors seen during the soak:\n%s", l.v.name, s)
		}
	}
}
