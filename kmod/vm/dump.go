//go:build linux

package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxDump bounds the dump the guest sends (one line on the status port,
// which the host reads in lines of up to 1 MiB).
const maxDump = 768 << 10

// dumpLogLines is how much of the kernel's log ends the dump.
const dumpLogLines = 150

// guestDump describes what the guest's tasks are doing, for a host that sees
// no progress: every user process's threads with their state, wait channel
// and kernel stack (kernel threads only when in uninterruptible sleep), then
// the end of the kernel log after asking the kernel (sysrq w) for its
// blocked tasks. (The CPUs' backtraces, sysrq l, would show only idle
// loops: the host asks when qemu idles.) cmd is the command's pid,
// marked in the listing.
func guestDump(cmd int, outs map[string]*os.File) string {
	var b strings.Builder
	if up, err := os.ReadFile("/proc/uptime"); err == nil {
		fmt.Fprintf(&b, "guest uptime %s", strings.Fields(string(up))[0])
	}
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(&b, ", load %s", strings.TrimSpace(string(la)))
	}
	b.WriteString("\n")
	for _, pid := range pids("/proc") {
		p := filepath.Join("/proc", strconv.Itoa(pid))
		st, ok := readStat(filepath.Join(p, "stat"))
		if !ok {
			continue
		}
		kthread := pid == 2 || st.ppid == 2
		if kthread && !strings.ContainsAny(st.state, "D") {
			continue
		}
		args := ""
		if c, err := os.ReadFile(filepath.Join(p, "cmdline")); err == nil {
			args = strings.TrimSpace(strings.ReplaceAll(string(c), "\x00", " "))
		}
		mark := ""
		switch {
		case pid == cmd:
			mark = " [the command]"
		case pid == 1:
			mark = " [init]"
		case kthread:
			mark = " [kernel thread]"
		}
		fmt.Fprintf(&b, "pid %d (%s) %s ppid %d%s: %s\n", pid, st.comm, st.state, st.ppid, mark, trimTo(args, 200))
		for _, tid := range pids(filepath.Join(p, "task")) {
			t := filepath.Join(p, "task", strconv.Itoa(tid))
			ts, ok := readStat(filepath.Join(t, "stat"))
			if !ok {
				continue
			}
			wchan, _ := os.ReadFile(filepath.Join(t, "wchan"))
			fmt.Fprintf(&b, "  thread %d (%s) %s wchan %s\n", tid, ts.comm, ts.state, strings.TrimSpace(string(wchan)))
			stack, _ := os.ReadFile(filepath.Join(t, "stack"))
			for _, l := range strings.Split(strings.TrimSpace(string(stack)), "\n") {
				if l != "" {
					b.WriteString("    " + l + "\n")
				}
			}
		}
	}
	portState(&b, outs)
	// The kernel's own view of the tasks blocked in uninterruptible sleep,
	// into its log.
	os.WriteFile("/proc/sysrq-trigger", []byte("w"), 0)
	b.WriteString("kernel log (end):\n")
	for _, l := range kernelLogTail(dumpLogLines) {
		b.WriteString("  " + l + "\n")
	}
	s := b.String()
	if len(s) > maxDump {
		s = s[:maxDump] + "\n[dump cut short]\n"
	}
	return s
}

func trimTo(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// pids lists the numeric entries of dir (/proc or /proc/PID/task) in order.
func pids(dir string) []int {
	ents, _ := os.ReadDir(dir)
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

type procStat struct {
	comm, state string
	ppid        int
}

// readStat reads a /proc/PID/stat: the name, the state and the parent.
func readStat(path string) (procStat, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i, k := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || k < i {
		return procStat{}, false
	}
	f := strings.Fields(s[k+1:])
	if len(f) < 2 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return procStat{comm: s[i+1 : k], state: f[0], ppid: ppid}, true
}

// kernelLogTail is the last n lines of the kernel's log buffer.
func kernelLogTail(n int) []string {
	size, err := unix.Klogctl(unix.SYSLOG_ACTION_SIZE_BUFFER, nil)
	if err != nil || size <= 0 {
		size = 1 << 20
	}
	buf := make([]byte, size)
	m, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf)
	if err != nil {
		return []string{"(kernel log unreadable: " + err.Error() + ")"}
	}
	lines := strings.Split(strings.TrimRight(string(buf[:m]), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// portState describes the command's output ports: what the virtio console
// driver shows of them in debugfs (outvq_full: the guest waits for the host
// to hand buffers back) and whether a fresh poll, which first takes back the
// buffers the host has used, finds them writable.
func portState(b *strings.Builder, outs map[string]*os.File) {
	names := make([]string, 0, len(outs))
	for n := range outs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := outs[n]
		fmt.Fprintf(b, "port %s:", n)
		dirs, _ := filepath.Glob("/sys/class/virtio-ports/*/name")
		for _, p := range dirs {
			if nb, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(nb)) == n {
				dev := filepath.Base(filepath.Dir(p))
				if d, err := os.ReadFile(filepath.Join("/sys/kernel/debug/virtio-ports", dev)); err == nil {
					b.WriteString(" " + strings.Join(strings.Fields(string(d)), " "))
				}
			}
		}
		// Not f.Fd(), which would take the file out of the poller (and
		// its relay's write deadlines).
		var (
			k    int
			perr error
			pfd  = []unix.PollFd{{Events: unix.POLLOUT}}
		)
		rc, err := f.SyscallConn()
		if err == nil {
			err = rc.Control(func(fd uintptr) {
				pfd[0].Fd = int32(fd)
				k, perr = unix.Poll(pfd, 0)
			})
		}
		if err == nil {
			err = perr
		}
		if err != nil {
			fmt.Fprintf(b, "; poll: %v\n", err)
		} else {
			fmt.Fprintf(b, "; poll now: writable %v (revents %#x)\n", k > 0 && pfd[0].Revents&unix.POLLOUT != 0, pfd[0].Revents)
		}
	}
}
