package main

// zklocks demo pause: the frozen-holder story of demo fencing, told for
// one system at a time, ZooKeeper's rivals included, on servers started
// for the demo (internal/rivals). Holder A runs in a child process (this
// binary again, as "zklocks demo pause-holder", a mode not listed in the
// usage) so that SIGSTOP freezes all of its client, lease keep-alives
// included; B runs in this process. Both write to an internal/fence store
// in a temporary file.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zklocks/zklocks/internal/fence"
	"github.com/zklocks/zklocks/internal/rivals"
)

const pauseHelp = `usage: zklocks demo pause -system zk|etcd|redis|redlock|postgres [-ttl 1s]

A holder frozen past its TTL or session, on one system: A takes the lock
and, about to write, freezes (SIGSTOP of its whole process, as a long GC
pause or a descheduled VM would freeze it). B asks for the lock. A thaws
(SIGCONT) and finishes its write with the token it had. The demo says
whether B got the lock while A still believed it held it, and whether
the store could tell A's late write from a valid one:

  etcd      the lease ends; B gets in; the revision is a fencing token
            and the fenced store refuses A's write.
  redis     the key expires (SET NX PX); B gets in; no token: the store
            takes A's write over B's, a lost update.
  redlock   the same on five servers (redsync).
  postgres  pg_advisory_lock: the frozen session keeps its lock; B waits
            (3 x -ttl here) and gets in only after A releases.
  zk        runs zklocks demo fencing (the sequential lock, session
            timeout -ttl), which tells ZooKeeper's story.

The rivals' servers are started for the demo on loopback and stopped
afterwards (scripts/install-rivals.sh installs them). -servers and
-state are for -system zk only.`

// pauseSystems are the names -system takes, and what each stands for.
var pauseSystems = []string{"zk", "etcd", "redis", "redlock", "postgres"}

var pauseRival = map[string]rivals.System{
	"etcd":     rivals.SystemEtcd,
	"redis":    rivals.SystemRedis,
	"redlock":  rivals.SystemRedlock,
	"postgres": rivals.SystemPGSession,
}

// pauseLock is the lock's name on the rivals' servers, which are the
// demo's own.
const pauseLock = "demo-pause"

// etcdMinLease is the shortest lease etcd 3.4 grants with its default
// timing (1.5 election timeouts, rounded up to a whole second): asked
// for less, it grants this, so the demo says this.
const etcdMinLease = 2 * time.Second

func runPause(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newDemoFlags("pause", pauseHelp, stderr)
	system := fs.String("system", "", "the lock to freeze a holder of: "+strings.Join(pauseSystems, ", "))
	ttl := fs.Duration("ttl", time.Second, "the hold's TTL: Redis's and Redlock's key expiry, etcd's lease (at least 2s), "+
		"ZooKeeper's session timeout; PostgreSQL has none, and B waits 3 times this for it")
	switch err := fs.parse(args); {
	case errors.Is(err, errHelp):
		return nil
	case err != nil:
		return err
	}
	known := "(have " + strings.Join(pauseSystems, ", ") + ")"
	switch {
	case *system == "":
		return usageError{"-system is required " + known}
	case !slices.Contains(pauseSystems, *system):
		return usageError{fmt.Sprintf("-system: unknown system %q %s", *system, known)}
	case *ttl < 400*time.Millisecond || *ttl > time.Minute:
		return usageError{"-ttl must be from 400ms to 1m"}
	}
	if *system == "zk" {
		// ZooKeeper's story is demo fencing's, told against three stores;
		// it is run as it is rather than told twice.
		fargs := []string{"-session", ttl.String(), "-servers", *fs.servers, "-state", *fs.state}
		return runFencing(ctx, fargs, stdout, stderr)
	}
	s := pauseRival[*system]
	if s == rivals.SystemEtcd {
		// etcd counts leases in whole seconds, and the lock rounds up.
		*ttl = max(etcdMinLease, (*ttl+time.Second-1)/time.Second*time.Second)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	dir, err := os.MkdirTemp("", "zklocks-pause-")
	if err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	defer os.RemoveAll(dir)

	log := newDemoLog(stdout)
	var servers rivalServers
	defer servers.close()
	log.printf("Starting %s on loopback... ", pauseServersWhat[s])
	start := time.Now()
	if err := servers.start(ctx, s); err != nil {
		log.printf("\n")
		hint := ""
		if !errors.Is(err, rivals.ErrNotInstalled) {
			hint = " (scripts/install-rivals.sh installs the servers)"
		}
		return fmt.Errorf("pause: %s did not start%s: %w", pauseServersWhat[s], hint, err)
	}
	log.printf("ready in %v: %s\n", time.Since(start).Round(100*time.Millisecond), servers.target(s))
	d := &pauseDemo{system: s, name: *system, ttl: *ttl, log: log, servers: &servers,
		self: self, store: filepath.Join(dir, "store.json")}
	if err := d.run(ctx); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	return nil
}

// pauseServersWhat says which servers each system runs on.
var pauseServersWhat = map[rivals.System]string{
	rivals.SystemEtcd:      "a three-member etcd cluster",
	rivals.SystemRedis:     "one redis-server",
	rivals.SystemRedlock:   "five independent redis-servers (Redlock)",
	rivals.SystemPGSession: "PostgreSQL",
}

// target is where a holder process finds the servers of system (as
// rivals.HolderConfig.Target has it).
func (s *rivalServers) target(system rivals.System) string {
	switch system {
	case rivals.SystemEtcd:
		return strings.Join(s.etcd.Endpoints(), ",")
	case rivals.SystemRedis:
		return s.redis.Addr
	case rivals.SystemRedlock:
		addrs := make([]string, len(s.redlock))
		for i, r := range s.redlock {
			addrs[i] = r.Addr
		}
		return strings.Join(addrs, ",")
	}
	return s.pg.DSN()
}

type pauseDemo struct {
	system  rivals.System
	name    string // as -system gave it
	ttl     time.Duration
	log     *demoLog
	servers *rivalServers
	self    string // this binary, for the holder process
	store   string
}

// expires says whether the system ends a silent holder's hold by itself.
func (d *pauseDemo) expires() bool { return d.system != rivals.SystemPGSession }

// fenced says whether the system's lock has a fencing token.
func (d *pauseDemo) fenced() bool { return d.system == rivals.SystemEtcd }

// run tells the story once.
func (d *pauseDemo) run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	mode, what := fence.Unfenced, "a store that checks nothing (this lock has no token to check)"
	if d.fenced() {
		mode, what = fence.Fenced, "a store that checks fencing tokens"
	}
	store, err := fence.Create(d.store, mode)
	if err != nil {
		return err
	}
	d.log.printf("\n== %s: a holder frozen past its %s; %s ==\n", d.name, d.ttlWhat(), what)
	d.log.reset()

	a, err := rivals.StartHolder(exec.Command(d.self, "demo", "pause-holder"), rivals.HolderConfig{
		System: d.system, Target: d.servers.target(d.system), Lock: pauseLock, TTL: d.ttl, Store: d.store})
	if err != nil {
		return err
	}
	defer a.Close()
	locked, err := a.Next(ctx, "locked", 30*time.Second)
	if err != nil {
		return err
	}
	d.log.say("A (pid %d): Lock() -> holds the lock, %s", a.Pid(), d.tokenWhat(locked.Token))

	// B's client is opened before A freezes, so that the story's clock
	// does not run while it connects.
	b, err := d.servers.open(ctx, d.system, pauseLock, rivals.Options{TTL: d.ttl})
	if err != nil {
		return fmt.Errorf("B: %w", err)
	}
	defer b.Close()

	if err := a.Freeze(); err != nil {
		return err
	}
	frozen := time.Now()
	d.log.say("A: inside the lock, about to write... and freezes (SIGSTOP of its process: %s)", d.freezeWhat())

	d.log.say("B: Lock() ...")
	wait := 3 * d.ttl
	if d.expires() {
		wait = 2*d.ttl + 10*time.Second // a bound for a loaded machine; the TTL is what ends A's hold
	}
	wctx, wcancel := context.WithTimeout(ctx, wait)
	err = b.Lock(wctx)
	wcancel()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	bEntered := false
	switch {
	case err == nil:
		bEntered = true
		d.log.say("B: Lock() -> holds the lock, %v after A froze; %s", time.Since(frozen).Round(10*time.Millisecond), d.whyIn())
		d.log.say("   A still believes it holds the lock: it is frozen, not dead, and nothing has told it")
		if d.fenced() {
			d.log.say("   B's fencing token: %d (larger than A's %d: a later hold)", b.Token(), locked.Token)
		}
		if err := store.Write(b.Token(), "B", "B's update"); err != nil {
			return fmt.Errorf("B's write: %w", err)
		}
		d.log.say("B: writes %q%s -> accepted", "B's update", d.withToken(b.Token()))
	case errors.Is(err, context.DeadlineExceeded):
		if d.expires() {
			return fmt.Errorf("B did not get the lock within %v of A's freeze (TTL %v): %w", wait, d.ttl, err)
		}
		d.log.say("B: Lock() -> still waiting after %v (3 x -ttl): A's session still holds the advisory lock", wait)
		d.log.say("   PostgreSQL ties the lock to A's session, and A's connection is open: a frozen client is not")
		d.log.say("   a dead one, and the lock has no TTL. B gives up waiting, for now")
	default:
		return fmt.Errorf("B: Lock: %w", err)
	}

	if err := a.Thaw(); err != nil {
		return err
	}
	d.log.say("A thaws (SIGCONT) after %v and finishes the write it had begun: %q%s",
		time.Since(frozen).Round(10*time.Millisecond), "A's update", d.withToken(locked.Token))
	res, err := a.Next(ctx, "resumed", 30*time.Second)
	if err != nil {
		return err
	}
	switch {
	case res.WriteErr != "":
		d.log.say("   store: REFUSED: %s", res.WriteErr)
	case bEntered:
		d.log.say("   store: ACCEPTED: it had no token to check, so it cannot tell A's late write from a valid one.")
		d.log.say("   B's update is overwritten by a holder that no longer held the lock: a lost update")
	default:
		d.log.say("   store: accepted: A held the lock all along, so its write is a valid one")
	}
	if locked.UntilNs != 0 {
		// redsync's own validity: a client that compared it with the clock
		// just before its write would have caught this pause, though not a
		// pause that fell between that check and the write.
		d.log.say("   (redsync's validity of A's hold had ended %v before A resumed; A wrote without looking)",
			time.Duration(res.ResumedNs-locked.UntilNs).Round(10*time.Millisecond))
	}
	unlock := "nil"
	if res.UnlockErr != "" {
		unlock = res.UnlockErr
	}
	d.log.say("A: Unlock() -> %s", unlock)

	if !bEntered {
		lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
		err := b.Lock(lctx)
		lcancel()
		if err != nil {
			return fmt.Errorf("B, after A released: %w", err)
		}
		d.log.say("B: Lock() -> holds the lock, now that A has released it")
		if err := store.Write(b.Token(), "B", "B's update"); err != nil {
			return fmt.Errorf("B's write: %w", err)
		}
		d.log.say("B: writes %q -> accepted", "B's update")
	}
	if err := b.Unlock(ctx); err != nil {
		return fmt.Errorf("B: Unlock: %w", err)
	}
	st, err := store.State()
	if err != nil {
		return err
	}
	d.log.say("B: Unlock(). The store holds %q", st.Value)
	d.log.printf("  store log:\n")
	for _, at := range st.Log {
		verdict := "accepted"
		if !at.Accepted {
			verdict = "refused"
		}
		d.log.printf("    %-2s token %d  %-14q %s\n", at.Writer, at.Token, at.Value, verdict)
	}
	d.log.printf("\nVerdict (%s): %s\n", d.name, d.verdict(bEntered, res, st.Value))
	return nil
}

func (d *pauseDemo) ttlWhat() string {
	switch d.system {
	case rivals.SystemEtcd:
		return fmt.Sprintf("lease (TTL %v)", d.ttl)
	case rivals.SystemPGSession:
		return "session (pg_advisory_lock: no TTL)"
	}
	return fmt.Sprintf("key's expiry (PX %v)", d.ttl)
}

func (d *pauseDemo) tokenWhat(token int64) string {
	switch d.system {
	case rivals.SystemEtcd:
		return fmt.Sprintf("fencing token %d (the store revision of its hold), lease %v kept alive by its client", token, d.ttl)
	case rivals.SystemRedis:
		return fmt.Sprintf("a key set with NX PX %v and a random value; no fencing token (Redis has none)", d.ttl)
	case rivals.SystemRedlock:
		return fmt.Sprintf("its key on a majority of the five servers, PX %v; no fencing token (Redlock has none)", d.ttl)
	}
	return "pg_advisory_lock in its session; no fencing token, no TTL"
}

func (d *pauseDemo) freezeWhat() string {
	if d.system == rivals.SystemEtcd {
		return "its lease keep-alives stop with it"
	}
	return "a stop-the-world GC pause, a swapped-out VM"
}

func (d *pauseDemo) whyIn() string {
	switch d.system {
	case rivals.SystemEtcd:
		return "A's lease ran out unrenewed and the servers deleted A's key"
	case rivals.SystemRedlock:
		return "A's keys expired on the servers"
	}
	return "A's key expired"
}

func (d *pauseDemo) withToken(token int64) string {
	if d.fenced() {
		return fmt.Sprintf(" with token %d", token)
	}
	return " (no token)"
}

// verdict is the story in one line, from what happened (not from what
// the system is expected to do, so that a surprise reads as one).
func (d *pauseDemo) verdict(bEntered bool, res rivals.HolderMsg, value string) string {
	switch {
	case bEntered && res.WriteStale:
		return fmt.Sprintf("a second holder got in while the first still believed; the fencing token kept the store safe (it holds %q).", value)
	case bEntered && res.WriteErr == "":
		return fmt.Sprintf("a second holder got in while the first still believed, and with no fencing token the late write was taken: B's update was lost (the store holds %q).", value)
	case bEntered:
		return fmt.Sprintf("a second holder got in while the first still believed; the late write failed: %s.", res.WriteErr)
	}
	return fmt.Sprintf("no second holder: the frozen session kept its lock, safe but stuck for as long as A stays frozen (the store holds %q).", value)
}

// pauseHolder is holder A, in the child process (rivals.RunHolder).
func pauseHolder(stdout io.Writer) error {
	if !rivals.IsHolder() {
		return usageError{"demo pause-holder is run by zklocks demo pause, not by hand"}
	}
	return rivals.RunHolder(stdout)
}
