//go:build linux

package bench

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Affinity pins the two ends of every sample to CPUs, as iperf3's -A does:
// the goroutine that writes and the one that reads each stream run on a
// thread bound to its end's CPU, so the two ends do not share a CPU and
// each CPU's time (and the softirq work the kernel does there) belongs to
// one end. The transports' own threads (quic-go's loops, the Go runtime's)
// and the kernel's work elsewhere are not pinned.
//
// In two-host mode only the client's CPU applies (on this host).
type Affinity struct {
	Client int `json:"client_cpu"`
	Server int `json:"server_cpu"`
}

func (a *Affinity) client() int {
	if a == nil {
		return -1
	}
	return a.Client
}

func (a *Affinity) server() int {
	if a == nil {
		return -1
	}
	return a.Server
}

// String is "client CPU 0, server CPU 1", or "not pinned".
func (a *Affinity) String() string {
	if a == nil {
		return "not pinned"
	}
	return fmt.Sprintf("client CPU %d, server CPU %d", a.Client, a.Server)
}

// ParseAffinity reads the --affinity flag: "auto" (pin to the first two
// CPUs this process may run on, where it has two or more), "off", or
// "CLIENT,SERVER" CPU numbers.
func ParseAffinity(s string) (*Affinity, error) {
	switch s {
	case "off", "none", "":
		return nil, nil
	case "auto":
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return nil, fmt.Errorf("affinity: %w", err)
		}
		var cpus []int
		for i := 0; i < runtime.NumCPU()*4 && len(cpus) < 2; i++ {
			if set.IsSet(i) {
				cpus = append(cpus, i)
			}
		}
		if len(cpus) < 2 {
			return nil, nil // one CPU: nothing to separate
		}
		return &Affinity{Client: cpus[0], Server: cpus[1]}, nil
	}
	c, sv, ok := strings.Cut(s, ",")
	a := &Affinity{}
	var err1, err2 error
	a.Client, err1 = strconv.Atoi(strings.TrimSpace(c))
	a.Server, err2 = strconv.Atoi(strings.TrimSpace(sv))
	if !ok || err1 != nil || err2 != nil || a.Client < 0 || a.Server < 0 {
		return nil, fmt.Errorf("affinity %q: want auto, off or CLIENT,SERVER CPU numbers (such as 0,1)", s)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		for _, cpu := range []int{a.Client, a.Server} {
			if !set.IsSet(cpu) {
				return nil, fmt.Errorf("affinity %q: this process may not run on CPU %d (see taskset -p $$ and the online CPUs)", s, cpu)
			}
		}
	}
	return a, nil
}

// pinThread binds the calling goroutine to its thread and the thread to
// the CPU (nothing for -1). The thread is never unlocked: it ends with the
// goroutine, so its binding does not leak to other goroutines.
func pinThread(cpu int) {
	if cpu < 0 {
		return
	}
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	unix.SchedSetaffinity(0, &set) // a CPU gone offline since: run unpinned
}
