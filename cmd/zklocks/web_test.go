package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/zktest"
)

// webUnderTest is a zklocks web run inside the test binary.
type webUnderTest struct {
	url, base, token, lockPath string
	out, errOut                *syncBuffer
	done                       chan int
	cancel                     context.CancelFunc
}

var webURL = regexp.MustCompile(`open (http://[^/\s]+)/\?token=([0-9a-f]+)`)
var webLock = regexp.MustCompile(`zklocks web: lock (\S+) `)

// startWeb runs zklocks web with args (and -addr 127.0.0.1:0) until the
// test ends, and returns once it prints its URL.
func startWeb(t *testing.T, args ...string) *webUnderTest {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &webUnderTest{out: &syncBuffer{}, errOut: &syncBuffer{}, done: make(chan int, 1), cancel: cancel}
	go func() {
		w.done <- run(ctx, append([]string{"web", "-addr", "127.0.0.1:0"}, args...), w.out, w.errOut)
	}()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if m := webURL.FindStringSubmatch(w.out.String()); m != nil {
			w.base, w.token, w.url = m[1], m[2], m[0][len("open "):]
			w.lockPath = webLock.FindStringSubmatch(w.out.String())[1]
			break
		}
		select {
		case code := <-w.done:
			t.Fatalf("zklocks web exited with %d before serving:\n%s\n%s", code, w.out, w.errOut)
		case <-deadline.C:
			cancel()
			t.Fatalf("zklocks web printed no URL within 60s:\n%s\n%s", w.out, w.errOut)
		case <-tick.C:
		}
	}
	t.Cleanup(func() { w.stop(t) })
	return w
}

// stop interrupts the run (Ctrl-C) if it still runs and waits for it.
func (w *webUnderTest) stop(t *testing.T) {
	w.cancel()
	select {
	case code, ok := <-w.done:
		if ok {
			assert.Equal(t, 0, code, "zklocks web's exit status; stderr:\n%s", w.errOut)
			close(w.done)
		}
	case <-time.After(60 * time.Second):
		t.Errorf("zklocks web did not stop within 60s")
	}
}

// post sends an action as the page does, with the token.
func (w *webUnderTest) post(t *testing.T, action, body string) (int, map[string]string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.base+"/api/"+action, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Zklocks-Token", w.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var m map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// TestWebBadInput: each mistake gets a message that says what is wrong and
// what to do, on stderr with exit status 1 or 2, before any page is served.
func TestWebBadInput(t *testing.T) {
	zktest.VerifyNoLeaksWithin(t, 5*time.Second)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown variant", []string{"-variant=optimistic"}, 2, `-variant: unknown variant "optimistic" (have naive, sequential, rwlock, semaphore, election)`},
		{"relative path", []string{"-path=locks/a"}, 2, "-path: "},
		{"short session", []string{"-session=100ms"}, 2, "-session 100ms: want at least 400ms"},
		{"port in use", []string{"-addr=" + busy.Addr().String(), "-servers=127.0.0.1:1"}, 1,
			"-addr " + busy.Addr().String() + ": the port is in use"},
		{"unreachable servers", []string{"-addr=127.0.0.1:0", "-servers=127.0.0.1:1", "-timeout=1s"}, 1,
			"the ensemble 127.0.0.1:1 is unreachable: no session within -timeout 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := zklocks(t, append([]string{"web"}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stdout:\n%s", out)
			assert.Contains(t, errOut, "zklocks web: "+tc.want)
			assert.NotContains(t, out, "open http", "no page served")
		})
	}
}

// TestWebNotALockPath: a path whose node is not a lock's is refused with
// the reason, for the queue and for the naive lock.
func TestWebNotALockPath(t *testing.T) {
	zktest.VerifyNoLeaksWithin(t, 5*time.Second)
	servers := serversFlag(t)
	conn := zktest.Connect(t)
	p := zktest.LockPath(t)
	_, err := conn.Create(p[:strings.LastIndex(p, "/")], nil, 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrNodeExists) {
		require.NoError(t, err)
	}
	_, err = conn.Create(p, []byte("settings"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = conn.Create(p+"/config", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Delete(p+"/config", -1); _ = conn.Delete(p, -1) })
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-path=" + p}, p + " is not a zklocks lock's path: 1 of its 1 children are not lock nodes (config)"},
		{[]string{"-path=" + p, "-variant=naive"}, p + " is not a naive lock's path: it is a persistent node with 1 children and 8 bytes of data"},
		{[]string{"-path=/zookeeper/quota"}, `-path: path "/zookeeper/quota" is in the server's reserved /zookeeper subtree`},
	} {
		code, out, errOut := zklocks(t, append([]string{"web", "-addr=127.0.0.1:0", servers}, tc.args...)...)
		assert.Equal(t, 2, code, "stdout:\n%s", out)
		assert.Contains(t, errOut, "zklocks web: "+tc.want)
	}
	kids, _, err := conn.Children("/zklocks-web")
	if err == nil {
		assert.Empty(t, kids, "a refused run left its parent behind")
	}
}

// TestWebActionsNeedTheToken: the page's actions are POSTs with the run's
// token; anything else is refused and changes nothing. The fault buttons
// are disabled on an ensemble that is not the page's own, with the reason.
func TestWebActionsNeedTheToken(t *testing.T) {
	zktest.VerifyNoLeaksWithin(t, 5*time.Second)
	w := startWeb(t, serversFlag(t))
	for _, tc := range []struct {
		method, token string
		want          int
	}{
		{http.MethodGet, w.token, http.StatusMethodNotAllowed},
		{http.MethodPost, "", http.StatusForbidden},
		{http.MethodPost, strings.Repeat("0", len(w.token)), http.StatusForbidden},
	} {
		req, err := http.NewRequest(tc.method, w.base+"/api/add", nil)
		require.NoError(t, err)
		if tc.token != "" {
			req.Header.Set("X-Zklocks-Token", tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, tc.want, resp.StatusCode, "%s with token %q", tc.method, tc.token)
	}
	resp, err := http.Get(w.base + "/events")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the event stream without the token")

	code, m := w.post(t, "kill-leader", "")
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, m["error"], "not started by zklocks web: it cannot kill or cut off its members")
	code, m = w.post(t, "sideways", "")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, m["error"], `unknown action "sideways"`)
	code, m = w.post(t, "release", "")
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, m["error"], "none of the page's contenders holds the lock")
	code, m = w.post(t, "add", "")
	require.Equal(t, http.StatusOK, code, "%v", m)
	assert.Contains(t, m["ok"], "c1 joins")

	code, _ = w.post(t, "stop", "")
	assert.Equal(t, http.StatusOK, code)
	select {
	case got := <-w.done:
		assert.Equal(t, 0, got, "stderr:\n%s", w.errOut)
		close(w.done)
	case <-time.After(30 * time.Second):
		t.Fatal("the stop button did not stop zklocks web")
	}
	conn := zktest.Connect(t)
	base := w.lockPath[:strings.LastIndex(w.lockPath, "/")]
	_, _ = conn.Sync(base)
	ok, _, err := conn.Exists(base)
	require.NoError(t, err)
	assert.False(t, ok, "%s left behind", base)
}

// watchState reads the page's event stream until cond holds for a state,
// and returns that state; it fails the test after within.
func (w *webUnderTest) watchState(t *testing.T, what string, within time.Duration, cond func(webState) bool) webState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.base+"/events?token="+w.token, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	var last webState
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var st webState
		require.NoError(t, json.Unmarshal([]byte(line), &st))
		last = st
		if cond(st) {
			return st
		}
	}
	var events []string
	for _, e := range last.Events {
		events = append(events, e.Kind+": "+e.Text)
	}
	t.Fatalf("%s: not within %v (%v); the last timeline:\n%s", what, within, ctx.Err(), strings.Join(events, "\n"))
	return last
}

// hasEvent reports whether the timeline has an event of kind, with text,
// later than the event with id after.
func hasEvent(st webState, after int64, kind, text string) bool {
	return slices.ContainsFunc(st.Events, func(e webEvent) bool {
		return e.ID > after && e.Kind == kind && strings.Contains(e.Text, text)
	})
}

func lastEventID(st webState) int64 {
	if len(st.Events) == 0 {
		return 0
	}
	return st.Events[len(st.Events)-1].ID
}

// TestWebLocalEnsemble: without ZK_SERVERS, zklocks web starts its own
// ensemble with proxied links, so the page's fault buttons are enabled;
// killing the leader shows on the timeline and on stderr at once. On exit
// the ensemble stops. (The election that follows, the cut and the heal are
// left to a hand run: an election across the proxies can take a minute.)
func TestWebLocalEnsemble(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts ZooKeeper; run without -short")
	}
	if strings.TrimSpace(os.Getenv("ZK_SERVERS")) != "" {
		t.Skip("needs an ensemble of its own, started by zklocks web; unset ZK_SERVERS")
	}
	zktest.VerifyNoLeaksWithin(t, 10*time.Second)
	w := startWeb(t, "-session=2s")
	addrs := regexp.MustCompile(`ready in [^:]+: (\S+)`).FindStringSubmatch(w.out.String())
	require.NotNil(t, addrs, "no connect string in:\n%s", w.out)
	code, m := w.post(t, "add", "")
	require.Equal(t, http.StatusOK, code, "%v", m)
	st := w.watchState(t, "c1 holds", 20*time.Second, func(st webState) bool {
		return len(st.Queue) == 1 && st.Queue[0].Contender == "c1"
	})
	for _, a := range []string{"kill-leader", "cut"} {
		assert.Empty(t, st.Disabled[a], "%s enabled on the page's own ensemble", a)
	}
	assert.Equal(t, "no member is cut off", st.Disabled["heal"])

	before := lastEventID(st)
	code, m = w.post(t, "kill-leader", "")
	require.Equal(t, http.StatusOK, code, "%v", m)
	killed := regexp.MustCompile(`member (\d), the leader, killed`).FindStringSubmatch(m["ok"])
	require.NotNil(t, killed, "%v", m)
	w.watchState(t, "the killed leader on the timeline", 10*time.Second, func(st webState) bool {
		return hasEvent(st, before, "member", "member "+killed[1]+" stopped answering")
	})
	assert.Contains(t, w.errOut.String(), "zklocks web: member "+killed[1]+" stopped answering")

	w.stop(t) // waits for the member's restart, then stops the ensemble
	assert.Contains(t, w.out.String(), "stopping the local ensemble")
	for _, a := range strings.Split(addrs[1], ",") {
		_, err := ensemble.ServerStatus(a)
		assert.Error(t, err, "member %s still answers after zklocks web stopped", a)
	}
}
