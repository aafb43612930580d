//go:build linux

package perftest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processCost is the cost of an ended child process, from its rusage.
func processCost(ps *os.ProcessState) (Cost, bool) {
	if ps == nil {
		return Cost{}, false
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return Cost{}, false
	}
	return Cost{
		CPU:         time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		Voluntary:   ru.Nvcsw,
		Involuntary: ru.Nivcsw,
	}, true
}

// liveCost reads a running process's cost so far from /proc: the CPU time
// (schedstat, exact nanoseconds; stat's times are scaled by tick sampling
// and were 45% off over 200ms in the TCG guest) and the context switches
// (status) of the threads it has now.
func liveCost(pid int) (Cost, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	if _, err := os.Stat(dir + "/schedstat"); err != nil {
		return Cost{}, fmt.Errorf("perftest: the counters of process %d: %w (did it exit, or has the kernel no CONFIG_SCHED_INFO?)", pid, err)
	}
	tasks, _ := filepath.Glob(dir + "/task/*")
	var c Cost
	for _, t := range tasks {
		// A read that fails is a thread that exited meanwhile.
		if b, err := os.ReadFile(t + "/status"); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				k, v, _ := strings.Cut(line, ":")
				var sum *int64
				switch k {
				case "voluntary_ctxt_switches":
					sum = &c.Voluntary
				case "nonvoluntary_ctxt_switches":
					sum = &c.Involuntary
				default:
					continue
				}
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return Cost{}, fmt.Errorf("perftest: %s/status: %s %q: %w", t, k, v, err)
				}
				*sum += n
			}
		}
		if b, err := os.ReadFile(t + "/schedstat"); err == nil {
			f := strings.Fields(string(b))
			if len(f) == 0 {
				return Cost{}, fmt.Errorf("perftest: %s/schedstat is empty", t)
			}
			ns, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return Cost{}, fmt.Errorf("perftest: %s/schedstat: CPU time %q: %w", t, f[0], err)
			}
			c.CPU += time.Duration(ns)
		}
	}
	return c, nil
}
