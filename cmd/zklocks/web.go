package main

// zklocks web: a live page of one lock on a real ensemble. This file is
// the command line, the HTTP server and its safety (the per-run token);
// web_run.go holds the contenders and the actions, web_state.go reads the
// servers and turns successive readings into the page's timeline. The
// page itself (plain HTML, JavaScript and SVG) is under web/, embedded.

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/zkpath"
)

func init() {
	register(command{name: "web", summary: "a live page of a lock on a real ensemble: watch contenders queue, release, crash, freeze", run: runWeb})
}

//go:embed web
var webFiles embed.FS

const webHelp = `usage: zklocks web [-addr 127.0.0.1:8040] [-open] [-path /lock/path] [-variant sequential]
                   [-session 2s] [-servers host:port,...] [-timeout 10s]

Serves a page that shows one lock live, as the servers see it: the three
members (srvr: role, last zxid, connections; cons: which member each
session is connected to), the lock's queue in sequence order (each node's
owner session and czxid, its fencing token), each waiter's watch drawn as an
arrow to the node it watches (from the servers' watch lists, 4lw wchc), a
timeline of creates, deletes, fired watches, session expiries and leader
changes, and a fenced store (internal/fence) that every holder writes to
with its token. A table beside the picture shows the same state as text.

On the page you choose the variant (naive, sequential, rwlock with readers
and writers, semaphore with 2 permits, election), add contenders (each a
session of its own in this process, or, to freeze one, a child process
holding the sequential lock), release the holder, crash it (its connection dropped without
Unlock: the servers expire its session), freeze a child holder (SIGSTOP)
and watch the store refuse its late write, cut the holder's member off
from the others, and kill the leader.

Servers come from -servers, else ZK_SERVERS; without either, a local
three-member ensemble with proxied links is started, as zklocks ensemble up
does, and stopped on exit. On another ensemble the buttons that need the
local one (kill the leader, cut a member off) are disabled.

The page binds 127.0.0.1 unless -addr says otherwise. Every action is a
POST that carries the run's token, printed in the URL at start. Ctrl-C, or
the page's stop button, ends every contender and child process and removes
what the page created.`

type webOpts struct {
	addr, path, variant string
	servers             string
	session, timeout    time.Duration
	open                bool
}

func runWeb(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := flag.NewFlagSet("zklocks web", flag.ContinueOnError)
	f.SetOutput(stderr)
	f.Usage = func() { fmt.Fprintln(stderr, webHelp); f.PrintDefaults() }
	var o webOpts
	f.StringVar(&o.addr, "addr", "127.0.0.1:8040", "address to serve the page on (port 0: any free port)")
	f.BoolVar(&o.open, "open", false, "open the page in a browser")
	f.StringVar(&o.path, "path", "", "the lock path to show (default: a fresh one under /zklocks-web)")
	f.StringVar(&o.variant, "variant", "sequential", "the lock at start: "+strings.Join(webVariantNames(), ", "))
	f.DurationVar(&o.session, "session", 2*time.Second, "session timeout of the page's contenders (at least 400ms)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "how long to wait for a session on the ensemble")
	f.StringVar(&o.servers, "servers", "", "comma-separated host:port list (default: ZK_SERVERS, else a local ensemble started for the page)")
	switch err := parse(f, args); {
	case errors.Is(err, errHelp):
		return nil
	case err != nil:
		return err
	}
	if _, err := lookupWebVariant(o.variant); err != nil {
		return usageError{"-variant: " + err.Error()}
	}
	if o.path != "" {
		if err := zkpath.Validate(o.path); err != nil {
			return usageError{"-path: " + err.Error()}
		}
	}
	if o.session < 400*time.Millisecond {
		return usageError{fmt.Sprintf("-session %v: want at least 400ms (two ticks of the local ensemble)", o.session)}
	}
	if o.timeout <= 0 {
		return usageError{fmt.Sprintf("-timeout %v: want a positive duration", o.timeout)}
	}
	// The port first: a port in use is found before any ensemble starts.
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("-addr %s: the port is in use (%v); pick another with -addr 127.0.0.1:PORT, or -addr 127.0.0.1:0 for any free one", o.addr, err)
		}
		return fmt.Errorf("-addr %s: %w", o.addr, err)
	}
	defer ln.Close()

	addrs, ens, external, err := webEnsemble(ctx, o, stdout)
	if err != nil {
		return err
	}
	if ens != nil {
		defer func() {
			fmt.Fprintln(stdout, "stopping the local ensemble")
			ens.Close()
		}()
	}
	w, err := startWebRun(ctx, webConfig{addrs: addrs, ens: ens, external: external, path: o.path,
		variant: o.variant, session: o.session, timeout: o.timeout, stderr: stderr})
	if err != nil {
		return err
	}
	defer w.close()

	srv := &http.Server{Handler: w.handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	url := fmt.Sprintf("http://%s/?token=%s", ln.Addr(), w.token)
	fmt.Fprintf(stdout, "zklocks web: lock %s (%s) on %s\n", w.lockPath(), w.variantName(), strings.Join(addrs, ","))
	fmt.Fprintf(stdout, "open %s\n", url)
	fmt.Fprintln(stdout, "Ctrl-C, or the page's stop button, ends it")
	if o.open {
		openBrowser(url, stderr)
	}
	select {
	case <-ctx.Done():
	case <-w.stopRequested:
		fmt.Fprintln(stdout, "stop requested on the page")
	case err := <-served:
		return fmt.Errorf("serving the page: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	w.closeStreams() // the event streams end, so that Shutdown need not wait for them
	_ = srv.Shutdown(sctx)
	return nil
}

// webEnsemble picks the ensemble: -servers, else ZK_SERVERS, else a local
// one started here (returned, for the caller to close). external says why
// the fault buttons that need the local ensemble are disabled, or is "".
func webEnsemble(ctx context.Context, o webOpts, stdout io.Writer) ([]string, *ensemble.Ensemble, string, error) {
	for _, s := range []struct{ name, value string }{{"-servers", o.servers}, {"ZK_SERVERS", os.Getenv("ZK_SERVERS")}} {
		if addrs := splitServers(s.value); len(addrs) > 0 {
			return addrs, nil, fmt.Sprintf("the ensemble came from %s (%s), not started by zklocks web: it cannot kill or cut off its members; unset %s to have a local one", s.name, strings.Join(addrs, ","), s.name), nil
		}
	}
	fmt.Fprint(stdout, "Starting a local 3-member ZooKeeper ensemble (proxied links)... ")
	start := time.Now()
	cfg := ensemble.DefaultConfig()
	cfg.ProxiedLinks = true
	e, err := ensemble.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stdout)
		return nil, nil, "", err
	}
	fmt.Fprintf(stdout, "ready in %v: %s\n", time.Since(start).Round(100*time.Millisecond), e.ConnectString())
	return e.Servers(), e, "", nil
}

// openBrowser starts the desktop's browser on url and leaves it running:
// it is the user's, not ours to stop.
func openBrowser(url string, stderr io.Writer) {
	for _, name := range []string{"xdg-open", "open", "chromium", "firefox"} {
		if p, err := exec.LookPath(name); err == nil {
			cmd := exec.Command(p, url)
			if err := cmd.Start(); err == nil {
				go func() { _ = cmd.Wait() }()
				return
			}
		}
	}
	fmt.Fprintln(stderr, "zklocks web: -open: no browser found (xdg-open, open, chromium, firefox); open the URL by hand")
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// handler serves the page, its event stream and its actions.
func (w *webRun) handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFiles, "web")
	files := http.FileServerFS(static)
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			rw.Header().Set("Allow", "GET, HEAD")
			http.Error(rw, "the page is read with GET; actions are POSTs to /api/", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(rw, r)
	})
	mux.HandleFunc("GET /events", w.serveEvents)
	mux.HandleFunc("/api/{action}", w.serveAction)
	return securityHeaders(mux)
}

func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		rw.Header().Set("X-Content-Type-Options", "nosniff")
		rw.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(rw, r)
	})
}

func (w *webRun) tokenOK(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(w.token)) == 1
}

// serveEvents streams the state as server-sent events: the current state
// at once, then each new one.
func (w *webRun) serveEvents(rw http.ResponseWriter, r *http.Request) {
	if !w.tokenOK(r.URL.Query().Get("token")) {
		http.Error(rw, "wrong or missing token: open the URL zklocks web printed", http.StatusForbidden)
		return
	}
	flusher, ok := rw.(http.Flusher)
	if !ok {
		http.Error(rw, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch, cancel := w.subscribe()
	defer cancel()
	rw.Header().Set("Content-Type", "text/event-stream")
	rw.Header().Set("Cache-Control", "no-store")
	for {
		select {
		case msg, ok := <-ch:
			if !ok {
				return
			}
			if _, err := fmt.Fprintf(rw, "data: %s\n\n", msg); err != nil {
				return
			}
			flusher.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// actionRequest is the body of a POST to /api/{action}.
type actionRequest struct {
	Variant   string `json:"variant"`
	Contender string `json:"contender"`
}

// serveAction runs one action: a POST with the run's token in the
// X-Zklocks-Token header (a header: a form on another site cannot set it
// without a CORS preflight, which this server never grants).
func (w *webRun) serveAction(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", "POST")
		http.Error(rw, "actions are POST requests", http.StatusMethodNotAllowed)
		return
	}
	if !w.tokenOK(r.Header.Get("X-Zklocks-Token")) {
		http.Error(rw, "wrong or missing token: open the URL zklocks web printed", http.StatusForbidden)
		return
	}
	var req actionRequest
	if r.ContentLength != 0 {
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil {
			http.Error(rw, "bad request body: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	msg, err := w.act(r.PathValue("action"), req)
	rw.Header().Set("Content-Type", "application/json")
	if err != nil {
		code := http.StatusConflict
		var ue usageError
		if errors.As(err, &ue) {
			code = http.StatusBadRequest
		}
		rw.WriteHeader(code)
		_ = json.NewEncoder(rw).Encode(map[string]string{"error": err.Error()})
		return
	}
	_ = json.NewEncoder(rw).Encode(map[string]string{"ok": msg})
}
