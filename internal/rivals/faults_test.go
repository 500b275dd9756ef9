package rivals

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zklocks/zklocks/internal/fence"
	"github.com/zklocks/zklocks/internal/history"
)

// The fault tests put each rival lock through the faults the notes name
// and assert what each system is documented to do under them, so that a
// change of behaviour fails the test. Each logs its figures in one line,
// "RIVALFAULT system=... fault=... key=value ...", for
// docs/results/rivals.md. Holds are recorded on one wall clock (the
// frozen holder runs in another process) and checked for overlaps: an
// overlap is a second holder let in while the first still believed.

// faultLog logs the grep-able line of one system and fault.
func faultLog(t *testing.T, system, fault string, kv ...string) {
	t.Helper()
	t.Logf("RIVALFAULT system=%s fault=%s %s", system, fault, strings.Join(kv, " "))
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

func yn(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// wallHistory records holds against one wall-clock origin, so that holds
// seen by the holder process and by this one can be set side by side.
type wallHistory struct {
	origin time.Time
	holds  history.History
}

func newWallHistory() *wallHistory { return &wallHistory{origin: time.Now()} }

func (w *wallHistory) add(holder string, token int64, enter, exit time.Time) {
	w.holds = append(w.holds, history.Hold{Holder: holder, Token: token,
		Enter: time.Duration(enter.UnixNano() - w.origin.UnixNano()),
		Exit:  time.Duration(exit.UnixNano() - w.origin.UnixNano())})
}

// targetOf starts the shared servers of system if need be and returns
// what a holder process needs to reach them.
func targetOf(t *testing.T, system System) string {
	switch system {
	case SystemEtcd:
		return strings.Join(etcdCluster(t).Endpoints(), ",")
	case SystemRedis:
		return redisServerFor(t).Addr
	case SystemRedlock:
		return strings.Join(redlockServers(t), ",")
	case SystemPGSession, SystemPGXact:
		return postgresServer(t).DSN()
	}
	t.Fatalf("no system %q", system)
	return ""
}

// pgFrozenWait is how long the second client waits on PostgreSQL while
// the holder is frozen: longer than any rival's TTL here, and no expiry
// is expected at all.
const pgFrozenWait = 3 * time.Second

// TestFaultFrozenHolder freezes the first holder (SIGSTOP of its process)
// in its critical section, past its TTL, while a second client asks for
// the lock; then thaws it (SIGCONT), and the first holder writes with the
// token it had and releases. What each system is documented to do:
//
//   - etcd: the lease is no longer renewed, the servers end it after its
//     TTL and the second client gets the lock while the first still
//     believes it holds; the fencing token (the revision) of the second
//     is larger, and a fenced store refuses the first one's late write.
//   - Redis and Redlock: the key expires after PX and the second client
//     gets the lock, the first still believing; neither has a token, so
//     the store cannot tell the late write from a valid one and the
//     unfenced store takes it over the second holder's: a lost update.
//   - PostgreSQL (session and transaction locks): the frozen client keeps
//     its connection and so its lock, with no expiry; the second client
//     does not get in while it is frozen, and gets in once it releases.
func TestFaultFrozenHolder(t *testing.T) {
	for _, c := range []struct {
		system System
		// etcd grants no lease shorter than 2 s with its default timing
		// (1.5 election timeouts, rounded up to a whole second).
		ttl time.Duration
	}{
		{SystemEtcd, 2 * time.Second},
		{SystemRedis, time.Second},
		{SystemRedlock, time.Second},
		{SystemPGSession, 0},
		{SystemPGXact, 0},
	} {
		t.Run(string(c.system), func(t *testing.T) { testFrozenHolder(t, systemNamed(c.system), c.ttl) })
	}
}

func testFrozenHolder(t *testing.T, s system, ttl time.Duration) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	expires := ttl > 0
	store := faultStore(t, s.fenced)
	hist := newWallHistory()
	target := targetOf(t, s.name)
	b := s.open(t, lockName(t), Options{TTL: ttl})

	a := startHolder(t, s.name, target, lockName(t), max(ttl, time.Second), store.Path())
	locked := a.next(t, "locked", 30*time.Second)
	asked, aEnter := time.Unix(0, locked.AskedNs), time.Unix(0, locked.LockedNs)
	stopAt := time.Now()
	a.signal(t, syscall.SIGSTOP)

	// The second client asks while the first is frozen. Where a TTL runs
	// out it must get in, within a bound generous for a loaded machine.
	bEnter, bToken := secondClient(t, ctx, s, b, store, fault{"freeze", asked, stopAt, ttl, locked.Token})

	contAt := time.Now()
	a.signal(t, syscall.SIGCONT)
	res := a.next(t, "resumed", 20*time.Second)
	aExit := time.Unix(0, res.ResumedNs) // it believed until it wrote
	hist.add("A (frozen)", locked.Token, aEnter, aExit)

	if !expires {
		// The frozen holder was the holder all along: its write is a
		// valid one and its release frees the lock for the waiter.
		if res.WriteErr != "" || res.UnlockErr != "" {
			t.Fatalf("the thawed holder, which still held the lock: write %q, unlock %q", res.WriteErr, res.UnlockErr)
		}
		lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
		err := b.Lock(lctx)
		lcancel()
		if err != nil {
			t.Fatalf("the second client after the holder released: %v", err)
		}
		bEnter = time.Now()
		if err := store.Write(b.Token(), "B", "B's update"); err != nil {
			t.Fatal(err)
		}
	}
	bExit := time.Now()
	hist.add("B", bToken, bEnter, bExit)
	if err := b.Unlock(ctx); err != nil {
		t.Fatalf("the second holder's Unlock: %v", err)
	}
	double := history.Overlaps(hist.holds)
	state, err := store.State()
	if err != nil {
		t.Fatal(err)
	}

	lateWrite := "accepted"
	if res.WriteErr != "" {
		lateWrite = "refused"
	}
	switch {
	case !expires:
		if double != 0 || state.Value != "B's update" {
			t.Errorf("%d overlapping holds, store holds %q: want none and B's update last", double, state.Value)
		}
		faultLog(t, string(s.name), "frozen-holder", "ttl=none", "frozen="+ms(bEnter.Sub(stopAt)),
			"second_holder_while_frozen=no", "waited="+pgFrozenWait.String(),
			"second_holder_after_release="+ms(bEnter.Sub(contAt)), "double_holds=0",
			"fenced=n/a", "late_write=none(A still held)", "store_value="+quoteValue(state.Value))
		return
	case s.fenced:
		if !res.WriteStale || state.Value != "B's update" {
			t.Errorf("the fenced store: the late write gave %q, the store holds %q; want %v and B's update",
				res.WriteErr, state.Value, fence.ErrStaleToken)
		}
	default:
		if res.WriteErr != "" || state.Value != "A's update" {
			t.Errorf("the unfenced store: the late write gave %q, the store holds %q; want it accepted over B's update (no token to check)",
				res.WriteErr, state.Value)
		}
	}
	if double != 1 {
		t.Errorf("%d overlapping holds, want 1 (the second got in while the first believed): %v", double, hist.holds)
	}
	if !res.UnlockNotHeld {
		t.Errorf("the thawed holder's Unlock: %q, want ErrNotHeld", res.UnlockErr)
	}
	fenced := "no(no token)"
	if s.fenced {
		fenced = fmt.Sprintf("yes(token %d<%d)", locked.Token, bToken)
	}
	extra := []string{}
	if locked.UntilNs != 0 {
		// redsync's own validity: a client that looked at it before writing
		// would have seen the hold was over (here; not if the pause fell
		// between the look and the write).
		extra = append(extra, "validity_passed_at_resume="+yn(res.ResumedNs > locked.UntilNs))
	}
	faultLog(t, string(s.name), "frozen-holder", append([]string{"ttl=" + ttl.String(),
		"frozen=" + ms(contAt.Sub(stopAt)), "second_holder_while_frozen=yes",
		"second_holder_after=" + ms(bEnter.Sub(aEnter)), "after_freeze=" + ms(bEnter.Sub(stopAt)),
		fmt.Sprintf("double_holds=%d", double),
		"fenced=" + fenced, "late_write=" + lateWrite, "store_value=" + quoteValue(state.Value),
		"first_unlock=" + notHeld(res.UnlockNotHeld)}, extra...)...)
}

// TestFaultCutHolder cuts the first holder off from the servers in its
// critical section: every link between its client and them goes silent
// (cutLinks), while the holder runs on and the servers stay up, and a
// second client, which reaches the servers, asks for the lock. The cut
// holder then writes with the token it had and tries to release. What
// each system is documented to do:
//
//   - etcd: the keep-alives no longer arrive, the servers end the lease
//     after its TTL and the second client gets the lock; the cut client
//     gives the lease up once no keep-alive has been answered for a TTL,
//     and its session's Done closes: it is told, if it looks. The
//     revision fences its late write.
//   - Redis and Redlock: the key expires after PX and the second client
//     gets in. Nothing tells the cut holder (Redlock's validity end is a
//     clock it may read), and its late write, with no token, lands over
//     the second holder's.
//   - PostgreSQL (session lock): the server sees nothing wrong (the
//     connection is open and its peer answers TCP), so it keeps the
//     session and its lock: the second client waits, and the cut holder
//     can release nothing either. The lock is freed when the server's
//     side of the connection ends: here when the cut heals and the proxy
//     closes what lived through it; across a real cut, when TCP
//     keep-alive gives up.
//
// In every case the cut holder's Unlock gets no answer.
func TestFaultCutHolder(t *testing.T) {
	for _, c := range []struct {
		system System
		ttl    time.Duration // as in TestFaultFrozenHolder
	}{
		{SystemEtcd, 2 * time.Second},
		{SystemRedis, time.Second},
		{SystemRedlock, time.Second},
		{SystemPGSession, 0},
	} {
		t.Run(string(c.system), func(t *testing.T) { testCutHolder(t, systemNamed(c.system), c.ttl) })
	}
}

// fault is what the second client's checks need to know of the first
// holder's fault: its name, when the first asked for the lock, when the
// fault began, the TTL (0: none, PostgreSQL) and the first one's token.
type fault struct {
	name       string
	asked, at  time.Time
	ttl        time.Duration
	firstToken int64
}

// secondClient has b ask for the lock while the first holder suffers f.
// Where a TTL runs out it must get in, within a bound generous for a
// loaded machine, but never before the first hold could have expired; it
// then writes to store with its token. Without a TTL it must still be
// waiting when its deadline passes. It returns when b got in (or gave up)
// and b's token (0 without a hold).
func secondClient(t *testing.T, ctx context.Context, s system, b Locker, store *fence.Store, f fault) (time.Time, int64) {
	t.Helper()
	expires := f.ttl > 0
	wait := pgFrozenWait
	if expires {
		wait = 2*f.ttl + 5*time.Second
	}
	wctx, wcancel := context.WithTimeout(ctx, wait)
	err := b.Lock(wctx)
	wcancel()
	bEnter := time.Now()
	switch {
	case expires && err != nil:
		t.Fatalf("the second client did not get the lock within %v of the %s (TTL %v): %v", wait, f.name, f.ttl, err)
	case !expires && err == nil:
		t.Fatalf("the second client got the lock %v after the %s: PostgreSQL has no expiry, the first session still holds it",
			ms(bEnter.Sub(f.at)), f.name)
	case !expires && !errors.Is(err, context.DeadlineExceeded):
		t.Fatalf("the second client, waiting through the %s: %v, want its deadline to pass", f.name, err)
	case !expires:
		return bEnter, 0
	}
	bToken := b.Token()
	// A hold is never handed on before it could have expired: the key was
	// set after asked (Redis, Redlock); the lease was renewed every third
	// of its TTL, so it cannot end sooner than two thirds of it after the
	// fault, and the check allows half, for the servers' rounding of the
	// lease to whole seconds.
	earliest := f.asked.Add(f.ttl)
	if s.name == SystemEtcd {
		earliest = f.at.Add(f.ttl / 2)
	}
	if slack := 50 * time.Millisecond; bEnter.Before(earliest.Add(-slack)) {
		t.Errorf("the second client got in %v after the first asked, %v after the %s: before the TTL (%v) could run out",
			ms(bEnter.Sub(f.asked)), ms(bEnter.Sub(f.at)), f.name, f.ttl)
	}
	if s.fenced && bToken <= f.firstToken {
		t.Errorf("the second holder's token %d is not larger than the first's %d", bToken, f.firstToken)
	}
	if err := store.Write(bToken, "B", "B's update"); err != nil {
		t.Fatalf("the second holder's write: %v", err)
	}
	return bEnter, bToken
}

// cutUnlockWait is the context of the cut holder's Unlock. Not every
// client stops there: go-redis waits out its own read timeout (5 s by
// default; it leaves socket deadlines to the context only when told to)
// and pgx gives up 2 s after the context ends (connectPG).
const cutUnlockWait = time.Second

func testCutHolder(t *testing.T, s system, ttl time.Duration) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	expires := ttl > 0
	store := faultStore(t, s.fenced)
	hist := newWallHistory()
	target, links := cutOffTarget(t, s.name)
	b := s.open(t, lockName(t), Options{TTL: ttl})
	octx, ocancel := context.WithTimeout(ctx, 10*time.Second)
	al, err := openLocker(octx, s.name, target, lockName(t), Options{TTL: ttl})
	ocancel()
	if err != nil {
		t.Fatal(err)
	}
	a := closeLater(t, al)
	t.Cleanup(links.heal) // before a closes, which must reach its servers

	asked := time.Now()
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	aEnter, aToken := time.Now(), a.Token()
	// What the client itself can tell its holder: etcd's session ends when
	// its lease cannot be renewed; the others have nothing of the kind.
	told := make(chan time.Time, 1)
	var validUntil time.Time
	var pgPID uint32
	switch l := a.(type) {
	case *EtcdLock:
		go func() {
			select {
			case <-l.session.Done():
				told <- time.Now()
			case <-ctx.Done():
			}
		}()
	case *RedlockLock:
		validUntil = l.mutex.Until()
	case *PGSessionLock:
		pgPID = l.conn.PgConn().PID()
	}

	links.cutOff(t)
	cutAt := time.Now()

	bEnter, bToken := secondClient(t, ctx, s, b, store, fault{"cut", asked, cutAt, ttl, aToken})

	// The cut holder, running all along, goes on: it writes with the token
	// it had, then tries to release.
	var toldAt time.Time
	select {
	case toldAt = <-told:
	default:
	}
	aWrite := time.Now()
	writeErr := store.Write(aToken, "A", "A's update")
	if expires {
		// The second holder is done before the cut one's Unlock, which may
		// outlast a short TTL waiting for its answer.
		hist.add("B", bToken, bEnter, time.Now())
		if err := b.Unlock(ctx); err != nil {
			t.Fatalf("the second holder's Unlock: %v", err)
		}
	}
	uctx, ucancel := context.WithTimeout(ctx, cutUnlockWait)
	unlockErr := a.Unlock(uctx)
	ucancel()
	unlockTook := time.Since(aWrite)
	if unlockErr == nil || errors.Is(unlockErr, ErrNotHeld) {
		t.Errorf("the cut holder's Unlock: %v; want no answer (an error other than ErrNotHeld)", unlockErr)
	}

	if s.name == SystemEtcd && toldAt.IsZero() {
		select {
		case toldAt = <-told:
		case <-time.After(time.Until(cutAt.Add(2*ttl + 5*time.Second))):
			t.Fatalf("the cut holder's etcd session did not end within %v of the cut (TTL %v)", ms(time.Since(cutAt)), ttl)
		}
	}

	var pgHeld bool
	var keepalive string
	if !expires {
		// The server still gives the lock to the cut session, though its
		// client has given up on the connection and closed it.
		held, ka, err := pgSessionHolds(ctx, postgresServer(t).DSN(), pgPID)
		if err != nil {
			t.Fatal(err)
		}
		if !held {
			t.Fatalf("the server no longer gives the lock to the cut session (pid %d) %v after the cut", pgPID, ms(time.Since(cutAt)))
		}
		pgHeld, keepalive = held, ka
	}
	links.heal()
	healAt := time.Now()
	if !expires {
		lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
		err := b.Lock(lctx)
		lcancel()
		if err != nil {
			t.Fatalf("the second client after the cut healed (and the cut session's connection closed): %v", err)
		}
		bEnter = time.Now()
		if err := store.Write(b.Token(), "B", "B's update"); err != nil {
			t.Fatal(err)
		}
		// The history only records it: B's Lock began after the heal, so no
		// overlap can show here; that B could not get in during the cut is
		// secondClient's check.
		hist.add("A (cut off)", aToken, aEnter, healAt) // held on the server until then
		hist.add("B", b.Token(), bEnter, time.Now())
		if err := b.Unlock(ctx); err != nil {
			t.Fatalf("the second holder's Unlock: %v", err)
		}
	} else {
		hist.add("A (cut off)", aToken, aEnter, aWrite) // believed until it wrote
		// Reconnected, the holder tries its release again and learns.
		if tries, again := unlockAfterHeal(ctx, a); !errors.Is(again, ErrNotHeld) {
			t.Errorf("the holder's Unlock after the cut healed (try %d): %v, want ErrNotHeld", tries, again)
		}
	}
	double := history.Overlaps(hist.holds)
	state, err := store.State()
	if err != nil {
		t.Fatal(err)
	}
	unlock := "no_answer(" + ms(unlockTook) + ")"

	if !expires {
		if writeErr != nil || state.Value != "B's update" {
			t.Errorf("the cut holder's write: %v; the store holds %q: want it taken (A held) and B's update last",
				writeErr, state.Value)
		}
		faultLog(t, string(s.name), "cut-holder", "ttl=none", "cut="+ms(healAt.Sub(cutAt)),
			"second_holder_while_cut=no", "waited="+pgFrozenWait.String(), "a_told=no",
			"first_unlock="+unlock, "server_holds_for_cut_session="+yn(pgHeld)+"(after_its_client_gave_up)",
			"server_tcp_keepalive="+keepalive+"(answered_by_the_proxy_here)",
			"second_holder_after_heal="+ms(bEnter.Sub(healAt)), fmt.Sprintf("double_holds=%d", double),
			"fenced=n/a", "late_write=none(A still held)", "store_value="+quoteValue(state.Value))
		return
	}
	switch {
	case s.fenced:
		if !errors.Is(writeErr, fence.ErrStaleToken) || state.Value != "B's update" {
			t.Errorf("the fenced store: the late write gave %v, the store holds %q; want %v and B's update",
				writeErr, state.Value, fence.ErrStaleToken)
		}
	default:
		if writeErr != nil || state.Value != "A's update" {
			t.Errorf("the unfenced store: the late write gave %v, the store holds %q; want it accepted over B's update (no token to check)",
				writeErr, state.Value)
		}
	}
	if double != 1 {
		t.Errorf("%d overlapping holds, want 1 (the second got in while the first believed): %v", double, hist.holds)
	}
	lateWrite := "accepted"
	if writeErr != nil {
		lateWrite = "refused"
	}
	fenced := "no(no token)"
	if s.fenced {
		fenced = fmt.Sprintf("yes(token %d<%d)", aToken, bToken)
	}
	aTold := "no(nothing_tells_it)"
	if !toldAt.IsZero() {
		aTold = fmt.Sprintf("yes(session_done_after_cut=%s,before_second_holder=%s,before_late_write=%s)",
			ms(toldAt.Sub(cutAt)), yn(toldAt.Before(bEnter)), yn(toldAt.Before(aWrite)))
	}
	extra := []string{}
	if !validUntil.IsZero() {
		extra = append(extra, "validity_passed_at_write="+yn(aWrite.After(validUntil)))
	}
	faultLog(t, string(s.name), "cut-holder", append([]string{"ttl=" + ttl.String(),
		"second_holder_while_cut=yes", "second_holder_after=" + ms(bEnter.Sub(aEnter)),
		"after_cut=" + ms(bEnter.Sub(cutAt)), "a_told=" + aTold,
		fmt.Sprintf("double_holds=%d", double), "fenced=" + fenced, "late_write=" + lateWrite,
		"store_value=" + quoteValue(state.Value), "first_unlock=" + unlock,
		"first_unlock_after_heal=ErrNotHeld"}, extra...)...)
}

// unlockAfterHeal is the cut holder's code trying its release again once
// its links are back, as a caller whose Unlock failed would: the first
// request may fail on a connection that lived through the cut, which
// the heal closed, before the client dials again.
func unlockAfterHeal(ctx context.Context, l Locker) (tries int, err error) {
	for tries = 1; ; tries++ {
		uctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = l.Unlock(uctx)
		cancel()
		if err == nil || errors.Is(err, ErrNotHeld) || tries == 5 {
			return tries, err
		}
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return tries, err
		}
	}
}

// pgSessionHolds asks the server, on a connection of its own, whether
// the session of backend pid holds an advisory lock, and what its TCP
// keep-alive settings are (for this connection, as for any on loopback:
// the kernel's, unless set): idle time, interval and count.
func pgSessionHolds(ctx context.Context, dsn string, pid uint32) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := connectPG(ctx, dsn)
	if err != nil {
		return false, "", err
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = $1",
		int32(pid)).Scan(&n); err != nil {
		return false, "", fmt.Errorf("pg_locks: %w", err)
	}
	var idle, interval, count string
	if err := c.QueryRow(ctx, "SELECT current_setting('tcp_keepalives_idle'), current_setting('tcp_keepalives_interval'), "+
		"current_setting('tcp_keepalives_count')").Scan(&idle, &interval, &count); err != nil {
		return false, "", fmt.Errorf("keep-alive settings: %w", err)
	}
	return n > 0, fmt.Sprintf("%ss+%sx%ss", idle, count, interval), nil
}

// faultStore is the store the first and second holders write to: an
// internal/fence file, fenced (it refuses a token older than the largest
// it has seen) for a system with tokens, unfenced for the others, which
// have nothing to check.
func faultStore(t *testing.T, fenced bool) *fence.Store {
	t.Helper()
	mode := fence.Unfenced
	if fenced {
		mode = fence.Fenced
	}
	store, err := fence.Create(filepath.Join(t.TempDir(), "store.json"), mode)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// closeServerLater stops a test's own server after its Lockers have
// closed (cleanups run last first): a Locker closed after its server
// would wait for it.
// startServer starts a server of the test's own with start, fails the
// test (skips under -short) when it cannot, and stops it at the end.
func startServer[S interface{ Close() error }](t *testing.T, what string, start func(context.Context) (S, error)) S {
	t.Helper()
	ctx, cancel := startCtx()
	defer cancel()
	s, err := start(ctx)
	if err != nil {
		cannotStart(t, what, err)
	}
	closeServerLater(t, s)
	return s
}

func closeServerLater(t *testing.T, s interface{ Close() error }) {
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("stopping a server: %v", err)
		}
	})
}

func quoteValue(v string) string { return strings.ReplaceAll(fmt.Sprintf("%q", v), " ", "_") }

func notHeld(b bool) string {
	if b {
		return "ErrNotHeld"
	}
	return "ok"
}

// TestFaultKilledServer kills a server (SIGKILL, a crash) while a lock is
// held, each system on servers of its own.
func TestFaultKilledServer(t *testing.T) {
	t.Run("redis", testKilledRedis)
	t.Run("redlock", testKilledRedlockInstance)
	t.Run("etcd", testKilledEtcdLeader)
	t.Run("postgres", testKilledPostgres)
}

// testKilledRedis: the one Redis dies under a hold and comes back on its
// append-only file. The waiter's tries fail while it is down (this lock
// reports a connection error at once, as go-redis does; its users retry).
// The key was in the file: the write(2) of the AOF happens before the
// reply, and a killed process loses nothing the kernel has; only a lost
// page cache (a power cut, an OS crash) would lose the second that
// appendfsync everysec leaves unsynced, which is not done here. So the
// restarted server holds the key again, with its absolute expiry, and the
// waiter gets in only when the TTL runs out: the hold survived the crash.
func testKilledRedis(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	r := startServer(t, "redis-server", func(ctx context.Context) (*Redis, error) { return StartRedis(ctx, RedisConfig{}) })
	const ttl = 2 * time.Second
	hist := newWallHistory()
	a := closeLater(t, NewRedisLock(r.Addr, lockName(t), Options{TTL: ttl}))
	b := closeLater(t, NewRedisLock(r.Addr, lockName(t), Options{TTL: ttl}))
	asked := time.Now()
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	aEnter := time.Now()
	if err := r.Kill(); err != nil {
		t.Fatal(err)
	}
	killAt := time.Now()

	dctx, dcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	downErr := b.Lock(dctx)
	dcancel()
	if downErr == nil {
		t.Fatal("a waiter got the lock from a killed Redis")
	}
	if err := r.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	upAt := time.Now()
	probe := newRedisClient(r.Addr)
	defer probe.Close()
	pttl, err := probe.PTTL(ctx, "zklocks-rivals:"+lockName(t)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if pttl <= 0 {
		t.Fatalf("the restarted Redis lost the held key (PTTL %v): its AOF write should have reached the kernel before the reply", pttl)
	}

	// The waiter as its users write it: a connection error is retried.
	tries := 0
	var bEnter time.Time
	for {
		tries++
		lctx, lcancel := context.WithTimeout(ctx, 2*ttl+5*time.Second)
		err := b.Lock(lctx)
		lcancel()
		if err == nil {
			bEnter = time.Now()
			break
		}
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the waiter after the restart: %v", err)
		}
	}
	if bEnter.Before(asked.Add(ttl - 50*time.Millisecond)) {
		t.Errorf("the waiter got in %v after the first hold was asked for, before its TTL %v", ms(bEnter.Sub(asked)), ttl)
	}
	aUnlock := a.Unlock(ctx)
	if !errors.Is(aUnlock, ErrNotHeld) {
		t.Errorf("the first holder's Unlock after its TTL: %v, want ErrNotHeld", aUnlock)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	hist.add("A", 0, aEnter, asked.Add(ttl)) // it held until its key expired
	hist.add("B", 0, bEnter, time.Now())
	if n := history.Overlaps(hist.holds); n != 0 {
		t.Errorf("%d overlapping holds: %v", n, hist.holds)
	}
	faultLog(t, "redis", "kill-server", "ttl="+ttl.String(), "down="+ms(upAt.Sub(killAt)),
		"waiter_while_down="+errKind(downErr), "key_after_restart=kept", "pttl_after_restart="+ms(pttl),
		"second_holder_after="+ms(bEnter.Sub(aEnter)), "double_holds=0",
		"waiter_retries_after_restart="+fmt.Sprint(tries-1), "first_unlock="+notHeld(errors.Is(aUnlock, ErrNotHeld)),
		"durability=appendfsync_everysec(power_loss_not_tested)")
}

// testKilledPostgres: PostgreSQL's postmaster is killed (SIGKILL, a
// crash) while a session holds an advisory lock and a second session
// waits in pg_advisory_lock. Its backends, each in a session of its own
// (see Process), notice its death and exit at once, and the lock, in the
// shared memory they shared, goes with them. The waiter's connection
// ends and its Lock fails; the holder, which was running no statement,
// is told nothing (its backend's last word waits unread in its socket)
// and would learn at its next statement. The restarted server replays
// its WAL and holds no advisory lock at all, so the waiter, connecting
// again as its users' code would, gets the lock at once while the first
// holder still believes it holds it: with no token, the first holder's
// late write lands over the new holder's. Its Unlock then fails.
func testKilledPostgres(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	pg := startServer(t, "postgres", StartPostgres)
	store := faultStore(t, false)
	hist := newWallHistory()
	open := func() *PGSessionLock {
		octx, ocancel := context.WithTimeout(ctx, 10*time.Second)
		defer ocancel()
		l, err := NewPGSessionLock(octx, pg.DSN(), lockName(t))
		if err != nil {
			t.Fatal(err)
		}
		closeLater(t, l)
		return l
	}
	a, b := open(), open()
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	aEnter := time.Now()
	bres := make(chan error, 1)
	go func() { bres <- b.Lock(ctx) }()
	defer func() {
		cancel()
		<-bres // the waiter is done before its Locker closes
	}()
	if err := pgAwaitWaiter(ctx, pg.DSN()); err != nil {
		t.Fatal(err)
	}

	if err := pg.Kill(); err != nil {
		t.Fatal(err)
	}
	killAt := time.Now()
	var waiterErr error
	select {
	case waiterErr = <-bres:
		bres <- waiterErr
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter's Lock did not return within 10 s of the server's death")
	}
	waiterAfter := time.Since(killAt)
	if waiterErr == nil || errors.Is(waiterErr, context.DeadlineExceeded) {
		t.Fatalf("the waiter when the server died: %v, want its connection's error", waiterErr)
	}
	// pgx reads only when a statement runs: nothing reaches the holder.
	if a.conn.IsClosed() {
		t.Error("the holder's connection is marked closed with no statement run: pgx has started to watch it")
	}

	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	upAt := time.Now()
	c := open() // the waiter, connected again
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	err := c.Lock(lctx)
	lcancel()
	if err != nil {
		t.Fatalf("a client of the restarted server: %v; want the lock, which the crash forgot", err)
	}
	cEnter := time.Now()
	if err := store.Write(0, "B", "B's update"); err != nil {
		t.Fatal(err)
	}
	aWrite := time.Now()
	writeErr := store.Write(0, "A", "A's update")
	hist.add("A", 0, aEnter, aWrite) // it believed until it wrote
	uctx, ucancel := context.WithTimeout(ctx, 5*time.Second)
	aUnlock := a.Unlock(uctx)
	ucancel()
	if aUnlock == nil || errors.Is(aUnlock, ErrNotHeld) || errors.Is(aUnlock, context.DeadlineExceeded) {
		t.Errorf("the first holder's Unlock after the crash: %v, want its dead connection's error", aUnlock)
	}
	hist.add("B", 0, cEnter, time.Now())
	if err := c.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	double := history.Overlaps(hist.holds)
	state, err := store.State()
	if err != nil {
		t.Fatal(err)
	}
	if writeErr != nil || state.Value != "A's update" || double != 1 {
		t.Errorf("the first holder's late write: %v; the store holds %q; %d overlapping holds: want it accepted over B's update (no token), 1 overlap",
			writeErr, state.Value, double)
	}
	faultLog(t, "postgres-session", "kill-server", "ttl=none", "killed=postmaster(SIGKILL;backends_exit_on_its_death)",
		"waiter_while_down="+errKind(waiterErr)+"(after "+ms(waiterAfter)+")", "a_told=no(until_its_next_statement)",
		"down="+ms(upAt.Sub(killAt)), "lock_after_restart=forgotten",
		"second_holder_after_restart="+ms(cEnter.Sub(upAt)), fmt.Sprintf("double_holds=%d", double),
		"fenced=no(no token)", "late_write=accepted", "store_value="+quoteValue(state.Value),
		"first_unlock="+errKind(aUnlock))
}

// pgAwaitWaiter waits until a session of the server at dsn waits for an
// advisory lock.
func pgAwaitWaiter(ctx context.Context, dsn string) error {
	c, err := connectPG(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for {
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&n); err != nil {
			return fmt.Errorf("pg_locks: %w", err)
		}
		if n > 0 {
			return nil
		}
		if err := pause(ctx, 20*time.Millisecond); err != nil {
			return fmt.Errorf("no session waits for the lock: %w", err)
		}
	}
}

// errKind names an error for the figures line: a context's end, or the
// client's own error.
func errKind(err error) string {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return "none"
	case strings.Contains(err.Error(), "connection refused"):
		return "fails(connection_refused)"
	case errors.Is(err, context.DeadlineExceeded):
		return "waits(deadline)"
	case errors.As(err, &pgErr):
		return fmt.Sprintf("fails(%s_%s)", pgErr.Severity, pgErr.Code)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return "fails(connection_lost)"
	}
	return "error"
}

// testKilledRedlockInstance: one of the five dies under a hold. The hold
// is still on four, a majority: the waiter keeps waiting, the holder's
// release succeeds on the four, and the waiter then gets the lock from
// four. With three of five gone no client can win a majority at all.
func testKilledRedlockInstance(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	sctx, scancel := startCtx()
	rs, err := StartRedises(sctx, 5)
	scancel()
	if err != nil {
		cannotStart(t, "five redis-servers", err)
	}
	var addrs []string
	for _, r := range rs {
		closeServerLater(t, r)
		addrs = append(addrs, r.Addr)
	}
	const ttl = 2 * time.Second
	hist := newWallHistory()
	a := closeLater(t, NewRedlockLock(addrs, lockName(t), Options{TTL: ttl}))
	b := closeLater(t, NewRedlockLock(addrs, lockName(t), Options{TTL: ttl}))
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	aEnter := time.Now()
	if err := rs[0].Kill(); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	waitErr := b.Lock(wctx)
	wcancel()
	if !errors.Is(waitErr, context.DeadlineExceeded) {
		t.Fatalf("a waiter while the holder still has four of five: %v, want it to wait", waitErr)
	}
	aExit := time.Now()
	if err := a.Unlock(ctx); err != nil {
		t.Fatalf("the holder's release on the four left: %v", err)
	}
	// redsync waits for every server's answer, the dead one's dial
	// included (go-redis tries it a few times), before it returns.
	released := time.Now()
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	err = b.Lock(lctx)
	lcancel()
	if err != nil {
		t.Fatalf("the waiter after the release, four of five up: %v", err)
	}
	bEnter := time.Now()
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	bExit := time.Now()
	hist.add("A", 0, aEnter, aExit)
	hist.add("B", 0, bEnter, bExit)
	if n := history.Overlaps(hist.holds); n != 0 {
		t.Errorf("%d overlapping holds: %v", n, hist.holds)
	}

	for _, r := range rs[1:3] {
		if err := r.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	cctx, ccancel := context.WithTimeout(ctx, time.Second)
	downErr := b.Lock(cctx)
	ccancel()
	if !errors.Is(downErr, context.DeadlineExceeded) {
		t.Fatalf("Lock with three of five down: %v, want no majority until the deadline", downErr)
	}
	faultLog(t, "redlock", "kill-server", "ttl="+ttl.String(), "killed=1of5",
		"waiter_while_held="+errKind(waitErr), "hold_kept=yes", "first_unlock=ok(4of5)",
		"first_unlock_took="+ms(released.Sub(aExit)), "second_holder_after_release="+ms(bEnter.Sub(released)),
		"double_holds=0", "with_3of5_down=no_lock("+errKind(downErr)+")")
}

// testKilledEtcdLeader: the leader dies under a hold while a second
// client waits. The two left elect a leader; the holder's lease lives on
// (its keep-alives reach the new leader, which also renews every lease
// as it takes over), so the waiter keeps waiting past the TTL and gets
// the lock only when the holder releases it, with a larger token.
func testKilledEtcdLeader(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	e := startServer(t, "the etcd cluster", StartEtcd)
	// Longer than the other tests' leases: the etcd client gives a lease
	// up, stops renewing it and ends its session, once no keep-alive has
	// been answered for one TTL (clientv3's lessor.deadlineLoop), and an
	// election here plus the client's reconnection take most of 2 s. With
	// 2 s leases one of the two clients lost its lease in each of four
	// runs: the holder's once (the waiter got in while it held), the
	// waiter's three times. 5 s held in three runs of three; 8 s leaves
	// room for a CI run that loads both cores.
	const ttl = 8 * time.Second
	hist := newWallHistory()
	openEtcd := func() *EtcdLock {
		l, err := NewEtcdLock(ctx, e.Endpoints(), lockName(t), Options{TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		closeLater(t, l)
		return l
	}
	a, b := openEtcd(), openEtcd()
	admin, err := e.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	aEnter, aToken := time.Now(), a.Token()
	bres := make(chan error, 1)
	go func() { bres <- b.Lock(ctx) }()
	defer func() {
		cancel()
		<-bres // the waiter is done before its Locker closes
	}()
	// The waiter is queued once its key is there beside the holder's.
	for {
		n, err := admin.Get(ctx, a.pfx+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if n.Count == 2 {
			break
		}
		if err := pause(ctx, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}

	leader, err := etcdLeader(ctx, admin, e.Endpoints())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Members[leader].Kill(); err != nil {
		t.Fatal(err)
	}
	killAt := time.Now()
	var rest []string
	for i, ep := range e.Endpoints() {
		if i != leader {
			rest = append(rest, ep)
		}
	}
	if _, err := etcdLeader(ctx, admin, rest); err != nil {
		t.Fatalf("no new leader after the leader was killed: %v", err)
	}
	electedAfter := time.Since(killAt)

	// The waiter must still be waiting a TTL and more after the election.
	select {
	case err := <-bres:
		bres <- err
		lost := "no"
		select {
		case <-a.session.Done():
			lost = "yes"
		default:
		}
		t.Fatalf("the waiter returned (%v) %v after the leader was killed (new leader after %v), while the holder held; "+
			"the holder's session ended: %s; its Unlock: %v", err, ms(time.Since(killAt)), ms(electedAfter), lost, a.Unlock(ctx))
	case <-time.After(ttl + 2*time.Second):
	}
	aExit := time.Now()
	if err := a.Unlock(ctx); err != nil {
		t.Fatalf("the holder's release after the election: %v", err)
	}
	var bEnter time.Time
	select {
	case err := <-bres:
		bres <- err
		if err != nil {
			t.Fatalf("the waiter after the release: %v", err)
		}
		bEnter = time.Now()
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not get the lock within 10 s of the release")
	}
	bToken := b.Token()
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	hist.add("A", aToken, aEnter, aExit)
	hist.add("B", bToken, bEnter, time.Now())
	if err := history.Check(hist.holds); err != nil {
		t.Error(err)
	}
	faultLog(t, "etcd", "kill-server", "ttl="+ttl.String(), fmt.Sprintf("killed=leader(member %d of 3)", leader+1),
		"new_leader_after="+ms(electedAfter), "hold_kept=yes", "waiter_while_held=waits",
		"second_holder_after_release="+ms(bEnter.Sub(aExit)), "double_holds=0",
		fmt.Sprintf("tokens=%d<%d", aToken, bToken))
}

// etcdLeader waits until one of endpoints reports itself the leader and
// returns its index.
func etcdLeader(ctx context.Context, c *clientv3.Client, endpoints []string) (int, error) {
	for {
		for i, ep := range endpoints {
			sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			st, err := c.Status(sctx, ep)
			cancel()
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				return i, nil
			}
		}
		if err := pause(ctx, 50*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

// TestFaultRedlockClockJump is the scenario of Kleppmann's critique of
// Redlock. Client A takes the lock while two of the five servers are
// down (a network fault from A's side): it holds on three, a majority.
// The two come back. Then the clock of one of A's three jumps forward
// and the key expires there early; a second client wins that one and the
// two that came back, a majority of its own, while A's hold is still
// valid by redsync's own reckoning: two holders at once. Nothing in
// redsync's checks can see it (its drift allowance covers clocks that
// run a little fast, not a jump), and with no token nothing downstream can.
func TestFaultRedlockClockJump(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	sctx, scancel := startCtx()
	defer scancel()
	var rs []*Redis
	for i := range 5 {
		r, err := StartRedis(sctx, RedisConfig{FakeClock: i == 2})
		if err != nil {
			cannotStart(t, "five redis-servers, one under libfaketime", err)
		}
		closeServerLater(t, r)
		rs = append(rs, r)
	}
	var addrs []string
	for _, r := range rs {
		addrs = append(addrs, r.Addr)
	}
	// A TTL long enough that only the jump can end A's key.
	const ttl, jump = 30 * time.Second, time.Minute
	hist := newWallHistory()
	a := closeLater(t, NewRedlockLock(addrs, lockName(t), Options{TTL: ttl})).(*RedlockLock)
	b := closeLater(t, NewRedlockLock(addrs, lockName(t), Options{TTL: ttl})).(*RedlockLock)

	for _, r := range rs[3:] {
		if err := r.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Lock(ctx); err != nil {
		t.Fatalf("A with three of five up: %v", err)
	}
	aEnter := time.Now()
	for _, r := range rs[3:] {
		if err := r.Restart(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Before the jump B can win two servers at most: it waits.
	wctx, wcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	before := b.Lock(wctx)
	wcancel()
	if !errors.Is(before, context.DeadlineExceeded) {
		t.Fatalf("B before the jump: %v, want it to wait (A holds three of five)", before)
	}
	if err := rs[2].SetClockOffset(jump); err != nil {
		t.Fatal(err)
	}
	jumpAt := time.Now()
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	after := b.Lock(lctx)
	lcancel()
	bEnter := time.Now()
	if after != nil {
		t.Fatalf("B after server 3's clock jumped %v: %v; want a majority of its own (servers 3, 4, 5)", jump, after)
	}
	aUntil := a.mutex.Until()
	if !aUntil.After(bEnter) {
		t.Errorf("A's validity (until %v) ended before B got in at %v", aUntil, bEnter)
	}
	aExit := time.Now()
	hist.add("A", 0, aEnter, aExit)
	hist.add("B", 0, bEnter, time.Now())
	double := history.Overlaps(hist.holds)
	if double != 1 {
		t.Errorf("%d overlapping holds, want 1 (two holders at once): %v", double, hist.holds)
	}
	aUnlock := a.Unlock(ctx)
	if !errors.Is(aUnlock, ErrNotHeld) {
		t.Errorf("A's Unlock, its key on two servers only: %v, want ErrNotHeld", aUnlock)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("B's Unlock: %v", err)
	}
	faultLog(t, "redlock", "clock-jump", "ttl="+ttl.String(), "jump=+"+jump.String()+"(server 3 of 5)",
		"a_held_on=3of5(4,5 down when A locked)", "second_holder_before_jump=no",
		"second_holder_after_jump="+ms(bEnter.Sub(jumpAt)), "two_holders=yes",
		"a_validity_left="+ms(aUntil.Sub(bEnter)), fmt.Sprintf("double_holds=%d", double),
		"fenced=no(no token)", "first_unlock="+notHeld(errors.Is(aUnlock, ErrNotHeld)))
}
