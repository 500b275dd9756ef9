package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zktest"
)

// shotsEnv names the directory the browser test writes its screenshots
// to (make web-shots sets it to docs/images); unset, it takes none.
const shotsEnv = "ZKLOCKS_WEB_SHOTS"

// chromiumPath finds Debian's chromium. Without it the test fails and says
// how to get it; only go test -short skips.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: needs chromium and ZooKeeper; run without -short")
	}
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatal("no chromium (/usr/bin/chromium) for the browser test of zklocks web: run make test, " +
		"or scripts/install-browser.sh, which installs Debian's chromium")
	return ""
}

// page drives one headless chromium tab.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p *page) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	require.NoError(p.t, chromedp.Do(p.ctx, steps...))
}

// eval evaluates a JavaScript expression on the page.
func eval[T any](p *page, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	require.NoError(p.t, err, "evaluating %s", js)
	return v
}

// until polls the page (chromedp's Poll, in the page) until the JavaScript
// condition holds, and fails the test with what after within.
func (p *page) until(what, cond string, within time.Duration) {
	p.t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.Poll[chromedp.Void](cond,
		chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(within)))
	if err != nil {
		status, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector("#status").textContent + " | " + document.querySelector("#alert").textContent + " | " + document.querySelector("#result").textContent`))
		p.t.Fatalf("page: %s: not within %v (%v); status | alert | result: %q", what, within, err, status)
	}
}

// click presses a button of the page's controls, as a user would, once it
// is enabled.
func (p *page) click(action string) {
	p.t.Helper()
	sel := fmt.Sprintf(`#controls button[data-action=%q]`, action)
	p.until(action+" enabled", fmt.Sprintf(`!document.querySelector(%q).disabled`, sel), 10*time.Second)
	p.do(chromedp.Click(chromedp.CSS(sel)))
}

// chooseVariant picks a variant in the form and submits it.
func (p *page) chooseVariant(v string) {
	p.t.Helper()
	p.do(chromedp.SetValue(chromedp.CSS("#variant"), v), chromedp.Click(chromedp.CSS(`#variant-form button[type=submit]`)))
	p.until(v+", nobody left", fmt.Sprintf(`window.zk.state.variant === %q && window.zk.state.contenders.length === 0 && window.zk.state.queue.length === 0 && window.zk.state.waiters.length === 0`, v), 15*time.Second)
}

func (p *page) shot(name string) {
	p.t.Helper()
	dir := os.Getenv(shotsEnv)
	if dir == "" {
		return
	}
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	require.NoError(p.t, err)
	require.NoError(p.t, os.MkdirAll(dir, 0o755))
	require.NoError(p.t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
}

// holderIs is a condition: the queue's holder, in the picture, is who.
func holderIs(who string) string {
	return fmt.Sprintf(`(() => { const h = document.querySelector('#nodes-layer g.node[data-role="holds"]'); return !!h && h.dataset.contender === %q; })()`, who)
}

// watchesSince counts the timeline's wake-ups after event id.
func watchesSince(id int) string {
	return fmt.Sprintf(`[...document.querySelectorAll('#timeline li[data-kind="watch"]')].filter(li => +li.dataset.id > %d)`, id)
}

// settled is a condition: every waiter in the picture has its watch.
const settled = `(() => {
  const w = [...document.querySelectorAll('#nodes-layer g.node[data-role="waits"], #nodes-layer g.waiter')];
  return w.every(g => g.dataset.watches !== "") && document.querySelectorAll('#arrows-layer path.arrow').length === w.length;
})()`

// TestWebBrowser drives the page in headless chromium against zklocks web
// on the real ensemble, one scene after another on one run of it: the
// sequential lock wakes one waiter per release, the naive lock all of
// them; a frozen child holder's late write is refused by the fenced store;
// the text view says what the picture shows. It measures the page's load
// to its first picture and how soon an event is on the screen after its
// commit (a create's ctime, the leader's clock: the same machine's).
func TestWebBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	zktest.VerifyNoLeaksWithin(t, 10*time.Second)
	servers := serversFlag(t)
	t.Setenv(childEnv, "1") // the child holder is this binary, running main
	start := time.Now()
	w := startWeb(t, servers, "-session=1s", "-variant=sequential")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1400, 1100),
		chromedp.Flag("force-device-scale-factor", "1"))...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	p := &page{t: t, ctx: bctx}
	p.do(chromedp.Navigate(w.url))
	p.until("first picture", `document.querySelector("#picture").dataset.ready === "1"`, 10*time.Second)
	firstPicture := eval[float64](p, `window.zk.firstPictureMs`)
	t.Logf("page load to first picture: %.0f ms (navigation start to the first state drawn; target < 1000 ms)", firstPicture)
	assert.Less(t, firstPicture, 5000.0, "first picture")

	// Sequential: four contenders queue; a release wakes one.
	for i := 1; i <= 4; i++ {
		p.click("add")
		p.until(fmt.Sprintf("c%d's node", i), fmt.Sprintf(`!!document.querySelector('#nodes-layer g.node[data-contender="c%d"]')`, i), 10*time.Second)
	}
	p.until("c1 holds, three waiters watching", holderIs("c1")+" && "+settled, 10*time.Second)
	checkTextMatchesPicture(t, p)
	p.shot("web-sequential-queue.png")
	last := eval[int](p, `window.zk.lastEventId`)
	p.click("release")
	p.until("c2 holds after the release, the queue settled", holderIs("c2")+" && "+settled+" && "+watchesSince(last)+".length >= 1", 10*time.Second)
	woken := eval[[]string](p, watchesSince(last)+`.map(li => li.dataset.who)`)
	assert.Equal(t, []string{"c2"}, woken, "sequential: one release, one watch fired, and it woke the next in line")
	checkTextMatchesPicture(t, p)
	p.shot("web-sequential-release.png")

	// Crash: c2's connection drops without Unlock; the servers expire its
	// session, delete its node, and c3's watch fires.
	last = eval[int](p, `window.zk.lastEventId`)
	p.click("crash")
	p.until("c2's session expired, c3 holds", holderIs("c3")+" && "+settled+` && [...document.querySelectorAll('#timeline li[data-kind="expire"]')].some(li => li.dataset.who === "c2" && +li.dataset.id > `+fmt.Sprint(last)+`)`, 10*time.Second)
	woken = eval[[]string](p, watchesSince(last)+`.map(li => li.dataset.who)`)
	assert.Equal(t, []string{"c3"}, woken, "the crashed holder's expiry woke the next in line only")
	checkTextMatchesPicture(t, p)

	// Naive: every waiter's watch fires on a release.
	p.chooseVariant("naive")
	for i := 5; i <= 8; i++ {
		p.click("add")
		p.until(fmt.Sprintf("c%d in the picture", i), fmt.Sprintf(`!!document.querySelector('#nodes-layer [data-contender="c%d"]')`, i), 10*time.Second)
	}
	p.until("c5 holds, three waiters watching the lock node", holderIs("c5")+" && document.querySelectorAll('#nodes-layer g.waiter').length === 3 && "+settled, 10*time.Second)
	checkTextMatchesPicture(t, p)
	p.shot("web-naive-herd.png")
	last = eval[int](p, `window.zk.lastEventId`)
	p.click("release")
	p.until("a new holder, every waiter woken", `(() => { const h = document.querySelector('#nodes-layer g.node[data-role="holds"]'); return !!h && h.dataset.contender !== "c5"; })() && `+
		settled+" && "+watchesSince(last)+".length >= 3", 10*time.Second)
	woken = eval[[]string](p, watchesSince(last)+`.map(li => li.dataset.who)`)
	sort.Strings(woken)
	assert.Equal(t, []string{"c6", "c7", "c8"}, woken, "naive: one release woke all three waiters")
	checkTextMatchesPicture(t, p)
	p.shot("web-naive-release.png")

	// Event-to-screen latency: each create on the page, after its commit.
	lat := eval[[]float64](p, `window.zk.latencies.filter(l => l.kind === "create").map(l => l.ms)`)
	require.NotEmpty(t, lat)
	slices.Sort(lat)
	t.Logf("event to screen: %d creates on the page %.0f ms (median), %.0f ms (max) after their commit (ctime); target < 200 ms",
		len(lat), lat[len(lat)/2], lat[len(lat)-1])
	assert.Less(t, lat[len(lat)/2], 1000.0, "median event-to-screen latency")

	// Freeze: a child holder is stopped, its session expires, the next
	// holder writes; thawed, the child's late write is refused.
	p.chooseVariant("sequential")
	p.click("add-process")
	p.until("the child process holds", `window.zk.state.contenders.some(c => c.kind === "process" && c.state === "holds")`, 20*time.Second)
	pid := eval[int](p, `window.zk.state.contenders.find(c => c.kind === "process").pid`)
	p.click("add")
	p.until("a waiter behind the child", `document.querySelectorAll('#nodes-layer g.node').length === 2 && `+settled, 10*time.Second)
	p.click("freeze")
	p.until("the store refused the thawed child's write", `!!document.querySelector('#store-table tr.refused') && !!document.querySelector('#timeline li[data-kind="store"]')`, 20*time.Second)
	p.until("the expiry on the timeline", `!!document.querySelector('#timeline li[data-kind="expire"]')`, 5*time.Second)
	p.shot("web-freeze-fenced.png")

	// A member dies under the page: the page says so, and so does stderr.
	if strings.TrimSpace(os.Getenv("ZK_SERVERS")) == "" {
		e := zktest.Ensemble(t)
		leader, err := e.Leader()
		require.NoError(t, err)
		victim := (leader + 1) % e.Size()
		require.NoError(t, e.Kill(victim))
		id := victim + 1
		p.until("the dead member on the page", fmt.Sprintf(`document.querySelector("#alert").textContent.includes("member %d (") && !!document.querySelector('#members-layer g.member[data-member="%d"]') && [...document.querySelectorAll('#timeline li[data-kind="member"]')].some(li => li.textContent.includes("member %d stopped answering"))`, id, id, id), 10*time.Second)
		p.shot("web-member-down.png")
		assert.Contains(t, w.errOut.String(), fmt.Sprintf("zklocks web: member %d stopped answering", id))
		require.NoError(t, e.Restart(victim))
		p.until("the member back", fmt.Sprintf(`[...document.querySelectorAll('#timeline li[data-kind="member"]')].some(li => li.textContent.includes("member %d answers again"))`, id), 10*time.Second)
	}

	// Stop on the page: every contender and child ends, nothing is left.
	p.click("stop")
	select {
	case code := <-w.done:
		assert.Equal(t, 0, code, "stderr:\n%s", w.errOut)
		close(w.done)
	case <-time.After(30 * time.Second):
		t.Fatal("the stop button did not stop zklocks web")
	}
	assert.False(t, running(pid), "child holder pid %d after stop", pid)
	conn := zktest.Connect(t)
	base := w.lockPath[:strings.LastIndex(w.lockPath, "/")]
	_, _ = conn.Sync(base)
	ok, _, err := conn.Exists(base)
	require.NoError(t, err)
	assert.False(t, ok, "%s left behind", base)
	t.Logf("browser test wall time: %v", time.Since(start).Round(100*time.Millisecond))
}

// checkTextMatchesPicture compares the SVG's nodes, waiters and arrows
// with the text view's rows, read in one evaluation (one rendered state).
func checkTextMatchesPicture(t *testing.T, p *page) {
	t.Helper()
	type views struct {
		SVG    []string `json:"svg"`
		Table  []string `json:"table"`
		Arrows int      `json:"arrows"`
	}
	v := eval[views](p, `({
  svg: [...document.querySelectorAll('#nodes-layer g.node, #nodes-layer g.waiter')].map(g => [g.dataset.node || g.dataset.session, g.dataset.role || "waits", g.dataset.contender, g.dataset.token || "", g.dataset.watches].join("|")),
  table: [...document.querySelectorAll('#queue-table tbody tr')].map(r => [r.dataset.node || r.dataset.session, r.dataset.role || "waits", r.dataset.contender, r.dataset.token || "", r.dataset.watches].join("|")),
  arrows: document.querySelectorAll('#arrows-layer path.arrow').length,
})`)
	assert.Equal(t, v.SVG, v.Table, "the text view lists what the picture draws")
	arrows := 0
	for _, row := range v.Table {
		if f := strings.Split(row, "|"); len(f) == 5 && f[4] != "" {
			arrows += len(strings.Split(f[4], ","))
		}
	}
	assert.Equal(t, arrows, v.Arrows, "one arrow per watch in the table")
}
