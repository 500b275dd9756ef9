package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used so far, user and
// system: around a run, the client side's cost (the locks, go-zookeeper,
// and the harness's own bookkeeping, alike for every variant run in this
// process). 0 where getrusage is not available.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuModel is the processor's name as Linux reports it ("" elsewhere).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// procStats is what Linux says of another process: its CPU time so far
// (user and system), its threads and its resident memory.
type procStats struct {
	cpu     time.Duration
	threads int
	rss     int64 // bytes
}

// statsOf reads them from /proc/<pid>: the CPU time as the sum over the
// process's threads of their time on a CPU in nanoseconds (schedstat;
// /proc/<pid>/stat counts in 10ms ticks, too coarse for an idle client),
// the rest from status.
func statsOf(pid int) (procStats, error) {
	var st procStats
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return st, fmt.Errorf("bench: process %d: no /proc/%d/task/*/schedstat (%v)", pid, pid, err)
	}
	for _, p := range tasks {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue // a thread that ended meanwhile: its time is lost, a few ns
		}
		f := strings.Fields(string(raw))
		if len(f) == 0 {
			return st, fmt.Errorf("bench: %s: empty", p)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return st, fmt.Errorf("bench: %s: %w", p, err)
		}
		st.cpu += time.Duration(ns)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		switch {
		case k == "Threads" && len(f) == 1:
			st.threads, _ = strconv.Atoi(f[0])
		case k == "VmRSS" && len(f) == 2: // "1234 kB"
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			st.rss = kb << 10
		}
	}
	return st, nil
}
