package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// measureDriverHoldCost is MeasureHoldCost for a peer run by a driver in
// hold mode (Driver.Hold): the driver's one session takes n locks and
// holds them while the servers' counters and the driver's CPU are read
// around the idle window. No session of this process is open meanwhile,
// so the packets are the driver's alone.
func measureDriverHoldCost(ctx context.Context, servers []string, v Variant, n int, idle time.Duration) (HoldCostResult, error) {
	res := HoldCostResult{Variant: v.Name, Held: n, Idle: idle, Driver: true, Lost: -1}
	var dir string
	err := withAdmin(ctx, servers, func(s *session) (err error) {
		dir, err = makeRunDir(s.conn(), v.Name+"-hold")
		return err
	})
	if err != nil {
		return res, err
	}
	defer func() {
		_ = withAdmin(context.WithoutCancel(ctx), servers, func(s *session) error { deleteTree(s.conn(), dir); return nil })
	}()

	cmd, err := v.Driver.Hold(ctx, servers, dir, n)
	if err != nil {
		return res, err
	}
	d, err := startHoldDriver(cmd)
	if err != nil {
		return res, fmt.Errorf("bench: %s hold driver: %w", v.Name, err)
	}
	defer d.stop()

	// The JVM starts in about a second; n locks are taken one after the
	// other, a few round trips and two writes each (the lock path, its
	// node), slower while a fresh JVM still interprets.
	budget := time.Minute + time.Duration(n)*30*time.Millisecond
	if err := d.await(ctx, "ready", time.Minute); err != nil {
		return res, err
	}
	s0, err := statsOf(cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	if err := d.say("take"); err != nil {
		return res, err
	}
	if err := d.await(ctx, "held", budget); err != nil {
		return res, err
	}
	s1, err := statsOf(cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	res.Goroutines = s1.threads - s0.threads
	if n > 0 {
		res.HeapPerLock = float64(s1.rss-s0.rss) / float64(n)
	}

	driverCPU := func() (time.Duration, error) {
		st, err := statsOf(cmd.Process.Pid)
		return st.cpu, err
	}
	if err := measureIdle(ctx, servers, idle, driverCPU, &res); err != nil {
		return res, err
	}

	if err := d.say("release"); err != nil {
		return res, err
	}
	return res, d.await(ctx, "released", budget)
}

// withAdmin runs f on a session of its own, closed when f returns.
func withAdmin(ctx context.Context, servers []string, f func(s *session) error) error {
	ss, err := connectAll(ctx, servers, 1)
	if err != nil {
		return err
	}
	defer closeAll(ss)
	return f(ss[0])
}

// holdDriver is a driver process in hold mode and its lines.
type holdDriver struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	stderr lockedBuffer // what it said there, for errors
}

// lockedBuffer is a buffer that exec's copying goroutine writes while
// an error message may read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startHoldDriver(cmd *exec.Cmd) (*holdDriver, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	d := &holdDriver{cmd: cmd, in: in, lines: make(chan string)}
	cmd.Stderr = &d.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(d.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
		if sc.Err() != nil {
			d.lines <- "error reading the driver's output: " + sc.Err().Error()
			_, _ = io.Copy(io.Discard, stdout) // to its end: the channel closes when the driver does
		}
	}()
	return d, nil
}

func (d *holdDriver) say(line string) error {
	_, err := io.WriteString(d.in, line+"\n")
	return err
}

// await waits for the line want; an error line, the end of the output,
// ctx or within ends the wait with an error.
func (d *holdDriver) await(ctx context.Context, want string, within time.Duration) error {
	t := time.NewTimer(within)
	defer t.Stop()
	for {
		select {
		case line, ok := <-d.lines:
			switch {
			case !ok:
				return fmt.Errorf("bench: hold driver ended before %q: %s", want, lastLine(d.stderr.String()))
			case line == want:
				return nil
			case strings.HasPrefix(line, "error"):
				return fmt.Errorf("bench: hold driver, waiting for %q: %s", want, line)
			}
		case <-t.C:
			return fmt.Errorf("bench: hold driver: no %q within %v: %s", want, within, lastLine(d.stderr.String()))
		case <-ctx.Done():
			return fmt.Errorf("bench: hold driver, waiting for %q: %w", want, ctx.Err())
		}
	}
}

// stop closes the driver's stdin (it releases what it holds and ends)
// and waits for it, killing it after 30s.
func (d *holdDriver) stop() {
	d.in.Close()
	done := make(chan struct{})
	go func() {
		for range d.lines { // until it exits
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
	}
	_ = d.cmd.Wait()
}

// lastLine is what a driver's stderr says in one line: the exception's
// own line when there is one, else the last.
func lastLine(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(nothing on stderr)"
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if strings.Contains(l, "Exception") || strings.Contains(l, "Error") {
			return strings.TrimSpace(l)
		}
	}
	return lines[len(lines)-1]
}
