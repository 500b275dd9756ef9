package bench

import (
	"bufio"
	"os"
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
