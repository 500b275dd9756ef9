package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zklocks/zklocks/internal/ensemble"
)

// state is what "ensemble up" leaves for "down" and "status" to find.
type state struct {
	Supervisor    int               `json:"supervisor_pid"` // the zklocks process that owns the JVMs
	ConnectString string            `json:"connect_string"`
	Version       string            `json:"version"`
	TickTime      string            `json:"tick_time"`
	ForceSync     bool              `json:"force_sync"`
	Dir           string            `json:"dir"`
	Started       time.Time         `json:"started"`
	StartedIn     string            `json:"started_in"` // how long the start took
	Members       []ensemble.Member `json:"members"`
}

func newState(e *ensemble.Ensemble, supervisor int, took time.Duration) state {
	return state{
		Supervisor:    supervisor,
		ConnectString: e.ConnectString(),
		Version:       e.Version(),
		TickTime:      e.Config().TickTime.String(),
		ForceSync:     e.Config().ForceSync,
		Dir:           e.Dir(),
		Started:       time.Now(),
		StartedIn:     took.Round(100 * time.Millisecond).String(),
		Members:       e.Members(),
	}
}

// defaultStatePath is $XDG_RUNTIME_DIR/zklocks-ensemble.json, or the same
// name in the temporary directory.
func defaultStatePath() string {
	dir := os.Getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "zklocks-ensemble.json")
}

func writeState(path string, st state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

func readState(path string) (state, error) {
	var st state
	data, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("read state %s: %w", path, err)
	}
	return st, nil
}

func removeState(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func supervisorAlive(st state) bool {
	return st.Supervisor > 0 && running(st.Supervisor) && cmdlineHas(st.Supervisor, "ensemble")
}

// running reports whether pid exists and is not a zombie: the supervisor
// of a background ensemble is reaped by init, which may take a while.
func running(pid int) bool {
	if !ensemble.Alive(pid) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) || !hasProcfs()
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func hasProcfs() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// stopEnsemble asks the supervisor to close the ensemble (SIGTERM) and
// waits for it, then kills any member JVM that is somehow still there.
func stopEnsemble(st state, within time.Duration) error {
	deadline := time.Now().Add(within)
	if supervisorAlive(st) {
		if err := syscall.Kill(st.Supervisor, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop supervisor %d: %w", st.Supervisor, err)
		}
		for running(st.Supervisor) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	var left []string
	for _, m := range st.Members {
		if m.PID == 0 || !running(m.PID) || !cmdlineHas(m.PID, "-Dzklocks.ensemble="+st.Dir) {
			continue
		}
		_ = syscall.Kill(-m.PID, syscall.SIGKILL)
		for running(m.PID) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if running(m.PID) {
			left = append(left, fmt.Sprint(m.PID))
		}
	}
	if strings.HasPrefix(filepath.Base(st.Dir), "zklocks-ensemble-") {
		os.RemoveAll(st.Dir)
	}
	if len(left) > 0 {
		return fmt.Errorf("member JVMs still running: %s", strings.Join(left, " "))
	}
	return nil
}

// cmdlineHas reports whether process pid's command line contains s. It
// guards against signalling a recycled pid. Without /proc (macOS) it
// trusts the pid.
func cmdlineHas(pid int, s string) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if errors.Is(err, os.ErrNotExist) {
		return !hasProcfs() // without procfs, trust the pid
	}
	if err != nil {
		return true
	}
	return strings.Contains(strings.ReplaceAll(string(data), "\x00", " "), s)
}
