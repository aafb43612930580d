//go:build linux

package perftest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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

// userHZ is the unit of the times in /proc/PID/stat (USER_HZ, 100 on every
// Linux architecture this runs on).
const userHZ = 100

// liveCost reads a running process's cost so far from /proc: the CPU time
// and the context switches of the threads it has now (their schedstat, in
// nanoseconds, and status), or, where the kernel keeps no schedstat, the
// CPU time of all its threads from /proc/PID/stat, in 10ms ticks. (The
// times in stat are scaled by the kernel's tick sampling and can be off by
// more than a tenth over a short interval; schedstat's are exact.)
func liveCost(pid int) (Cost, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	tasks, err := filepath.Glob(dir + "/task/*")
	if err != nil || len(tasks) == 0 {
		return Cost{}, fmt.Errorf("perftest: process %d has no threads to read (did it exit?)", pid)
	}
	var c Cost
	schedstat := true
	for _, t := range tasks {
		b, err := os.ReadFile(t + "/status")
		if err != nil {
			continue // the thread exited meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			switch {
			case err != nil:
			case k == "voluntary_ctxt_switches":
				c.Voluntary += n
			case k == "nonvoluntary_ctxt_switches":
				c.Involuntary += n
			}
		}
		if !schedstat {
			continue
		}
		b, err = os.ReadFile(t + "/schedstat")
		if errors.Is(err, fs.ErrNotExist) && !isGone(t) {
			schedstat = false
			continue
		}
		if err != nil {
			continue
		}
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
	if !schedstat {
		cpu, err := statCPU(dir)
		if err != nil {
			return Cost{}, err
		}
		c.CPU = cpu
	}
	return c, nil
}

// isGone reports whether the thread's directory has gone (it exited).
func isGone(task string) bool {
	_, err := os.Stat(task)
	return err != nil
}

// statCPU is the CPU time of all of a process's threads, from its stat.
func statCPU(dir string) (time.Duration, error) {
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0, fmt.Errorf("perftest: the counters of %s: %w", dir, err)
	}
	// The fields after the command's name, which is in parentheses and
	// may hold anything: state is field 3, utime 14, stime 15.
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, fmt.Errorf("perftest: %s/stat: no command field in %q", dir, b)
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("perftest: %s/stat: %d fields after the command, want at least 13", dir, len(f))
	}
	var cpu time.Duration
	for _, s := range f[11:13] {
		ticks, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("perftest: %s/stat: CPU time %q: %w", dir, s, err)
		}
		cpu += time.Duration(ticks) * time.Second / userHZ
	}
	return cpu, nil
}
