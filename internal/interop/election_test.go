package interop

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/election"
	"github.com/zklocks/zklocks/internal/history"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// curatorLatchPeer runs Curator's LeaderLatch: each hold is one term, a
// latch started, awaited and closed.
func curatorLatchPeer() peer {
	return peer{name: "curator-latch", command: func(t *testing.T, servers, path string, contenders, holds int, hold time.Duration) *exec.Cmd {
		cp := curatorClasspath(t)
		return exec.Command("java", "-cp", cp, "LockDriver", servers, path, strconv.Itoa(contenders),
			strconv.Itoa(holds), strconv.FormatInt(hold.Milliseconds(), 10), "--latch")
	}}
}

// Candidates of this module's election and Curator's LeaderLatch on one
// path: the merged history of terms is checked for two leaders at once.
func TestMixedElections(t *testing.T) {
	servers := strings.Join(zktest.Servers(t), ",")
	v := ours{"election", func(conn *zk.Conn, path string, _ int) (zklocks.Locker, func(context.Context) context.Context, error) {
		e, err := election.New(session(conn), path)
		return e, nil, err
	}}
	h := mix(t, servers, &v, curatorLatchPeer(), nil)
	n := history.Overlaps(h)
	t.Logf("election with curator-latch: %d terms, %d double leaders", len(h), n)
	if n != 0 {
		t.Errorf("%d double leaders in %d terms:\n%v", n, len(h), history.Check(h))
	}
}

// kazooElectionPeer runs kazoo's Election: each hold is one term, the
// function a contender runs as leader (Election.run).
func kazooElectionPeer() peer { return kazooDriver("kazoo-election", "--latch") }

// kazoo's Election is its Lock: election.py keeps a client.Lock(path,
// identifier) and runs the leader's function while holding it. That Lock
// counts as candidates only the names it makes, <uuid>__lock__<seq>,
// unless extra_lock_patterns names others, and Election passes none on.
// So kazoo's Election does not see this module's candidates ("-latch-"),
// while they see its: the two can not share a path. The first two
// subtests show each half of that, one term each; the third measures the
// failover from a frozen kazoo leader to ours, the fourth a mixed run;
// the last runs the pair that can share a path, kazoo's Lock told of
// "-latch-" (a Python candidate written as the Election is, on the Lock)
// beside our election.
func TestKazooElection(t *testing.T) {
	servers := strings.Join(zktest.Servers(t), ",")
	conn := zktest.Connect(t)

	// Our candidate leads; a kazoo Election started on the path then
	// leads too, at once, beside it.
	t.Run("kazoo-leads-beside-ours", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		path := zktest.LockPath(t)
		e, err := election.New(session(conn), path)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Campaign(ctx, []byte("ours")); err != nil {
			t.Fatal(err)
		}
		ourEnter := time.Now().UnixNano()
		// Had kazoo seen our node it would wait for our Resign, which comes
		// only after the driver ends: the driver's ctx ends that wait.
		dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
		defer dcancel()
		_, wait := runPeer(t, dctx, kazooElectionPeer(), servers, path, 1, 1, 100*time.Millisecond)
		theirs, err := wait()
		if err != nil {
			t.Fatalf("kazoo's Election did not lead while ours did: %v", err)
		}
		if locktest.IsClosed(e.Done()) {
			t.Fatalf("our term ended (%v) before kazoo's was over", e.Err())
		}
		ourExit := time.Now().UnixNano()
		if len(theirs) != 1 {
			t.Fatalf("kazoo reported %d terms, want 1", len(theirs))
		}
		h := history.History{{Holder: "election", Enter: time.Duration(ourEnter), Exit: time.Duration(ourExit)},
			{Holder: theirs[0].holder, Enter: time.Duration(theirs[0].acquired), Exit: time.Duration(theirs[0].release)}}
		if n := history.Overlaps(h); n != 1 {
			t.Errorf("%d double leaders, want 1 (kazoo's term inside ours): %v", n, h)
		}
		t.Logf("kazoo's Election led %v after our candidate, which still led: two leaders",
			time.Duration(theirs[0].acquired-ourEnter).Round(time.Millisecond))
		if err := e.Resign(ctx); err != nil {
			t.Error(err)
		}
		left(t, conn, path)
	})

	// A kazoo Election leads for a second; our candidate, campaigning
	// meanwhile, waits behind its node and leads only after it.
	t.Run("ours-waits-for-kazoo", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		path := zktest.LockPath(t)
		_, wait := runPeer(t, ctx, kazooElectionPeer(), servers, path, 1, 1, time.Second)
		if err := awaitChild(ctx, conn, path, "__lock__"); err != nil {
			t.Fatalf("kazoo's candidate never appeared on %s: %v", path, err)
		}
		e, err := election.New(session(conn), path)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Campaign(ctx, []byte("ours")); err != nil {
			t.Fatal(err)
		}
		ourEnter := time.Now().UnixNano()
		theirs, err := wait()
		if err != nil {
			t.Fatal(err)
		}
		if len(theirs) != 1 {
			t.Fatalf("kazoo reported %d terms, want 1", len(theirs))
		}
		if ourEnter < theirs[0].release {
			t.Errorf("our candidate led %v before kazoo's term ended: it did not wait for kazoo's node",
				time.Duration(theirs[0].release-ourEnter))
		}
		if err := e.Resign(ctx); err != nil {
			t.Error(err)
		}
		left(t, conn, path)
	})

	// kazoo's leader frozen (SIGSTOP) with our candidate queued behind
	// it: ours leads once the servers expire kazoo's session. A
	// measurement beside faulttest's TestElectionFailover, where the
	// frozen leader is ours: the failover is the servers' expiry of the
	// leader's session, whichever client the leader runs.
	t.Run("kazoo-leader-frozen", func(t *testing.T) {
		const st = time.Second
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		path := zktest.LockPath(t)
		cmd := kazooElectionPeer().command(t, servers, path, 1, 1, time.Minute)
		cmd.Args = append(cmd.Args, "--session-timeout", strconv.FormatFloat(st.Seconds(), 'f', -1, 64))
		if err := cmd.Start(); err != nil {
			t.Fatalf("kazoo driver: %v (%s)", err, installHint)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		if err := awaitChild(ctx, conn, path, "__lock__"); err != nil {
			t.Fatalf("kazoo's candidate never appeared on %s: %v", path, err)
		}
		e, err := election.New(session(conn), path)
		if err != nil {
			t.Fatal(err)
		}
		elected := make(chan error, 1)
		go func() { elected <- e.Campaign(ctx, []byte("ours")) }()
		if err := awaitChild(ctx, conn, path, "-latch-"); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-elected:
			t.Fatalf("our candidate's Campaign returned (%v) while kazoo's candidate led", err)
		default:
		}
		stopAt := time.Now()
		if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		if err := <-elected; err != nil {
			t.Fatalf("our candidate behind the frozen kazoo leader: %v", err)
		}
		failover := time.Since(stopAt)
		t.Logf("FAILOVER leader=kazoo-election fault=paused session=%v failover=%v ratio=%.2f",
			st, failover.Round(time.Millisecond), failover.Seconds()/st.Seconds())
		if err := e.Resign(ctx); err != nil {
			t.Error(err)
		}
		left(t, conn, path)
	})

	// Two candidates of each, taking turns as TestMixedElections' do: the
	// one-sided blindness of the subtests above, at scale. About a third
	// of some 300 terms had two leaders in five runs; none would mean that
	// kazoo learnt to see our nodes, and the docs must change.
	t.Run("mixed", func(t *testing.T) {
		h := mix(t, servers, ourElection(), kazooElectionPeer(), nil)
		n := history.Overlaps(h)
		t.Logf("election with kazoo-election: %d terms, %d double leaders (not safe, as documented)", len(h), n)
		if n == 0 {
			t.Errorf("no double leader in %d mixed terms: kazoo's Election saw our candidates, which election/doc.go says it cannot", len(h))
		}
	})

	// kazoo's Lock told of "-latch-" sees our candidates: terms never
	// overlap, every candidate leads, nothing is left.
	t.Run("kazoo-lock-told-of-latch", func(t *testing.T) {
		p := kazooDriver("kazoo+extra_lock_patterns=-latch-", "--extra-lock-patterns=-latch-")
		path := zktest.LockPath(t)
		h := mixAt(t, servers, path, ourElection(), p, nil)
		n := history.Overlaps(h)
		t.Logf("election with %s: %d terms, %d double leaders", p.name, len(h), n)
		if n != 0 {
			t.Errorf("%d double leaders in %d terms:\n%v", n, len(h), history.Check(h))
		}
		led := map[string]int{}
		for _, x := range h {
			led[x.Holder]++
		}
		for _, who := range []string{"election-0", "election-1", "kazoo-0", "kazoo-1"} {
			if led[who] == 0 {
				t.Errorf("%s never led (terms by candidate: %v)", who, led)
			}
		}
		left(t, conn, path)
	})
}

// ourElection is this module's election as mix runs it.
func ourElection() *ours {
	return &ours{"election", func(conn *zk.Conn, path string, _ int) (zklocks.Locker, func(context.Context) context.Context, error) {
		e, err := election.New(session(conn), path)
		return e, nil, err
	}}
}

// awaitChild waits until a child of path has a name containing part.
func awaitChild(ctx context.Context, conn *zk.Conn, path, part string) error {
	for {
		kids, _, ev, err := conn.ChildrenW(path)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		if errors.Is(err, zk.ErrNoNode) { // kazoo makes the path first
			var ok bool
			ok, _, ev, err = conn.ExistsW(path)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
		}
		for _, k := range kids {
			if strings.Contains(k, part) {
				return nil
			}
		}
		select {
		case <-ev:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// left fails t if candidates' nodes are left on path.
func left(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	if _, err := conn.Sync(path); err != nil {
		t.Fatal(err)
	}
	kids, _, err := conn.Children(path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	if len(kids) > 0 {
		t.Errorf("left on %s: %v", path, kids)
	}
}
