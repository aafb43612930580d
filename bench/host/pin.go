//go:build linux

package host

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// PinThread binds the calling goroutine to its thread and the thread to
// the CPU (nothing for -1). The thread is never unlocked: it ends with the
// goroutine, so its binding does not leak to other goroutines.
func PinThread(cpu int) {
	if cpu < 0 {
		return
	}
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	unix.SchedSetaffinity(0, &set) // a CPU gone offline since: run unpinned
}

// PinProcess binds every thread of this process to the CPU and sets
// GOMAXPROCS to 1, as one end of a measurement whose goroutines cannot be
// pinned one by one (an HTTP server's), and returns what puts both back.
// Threads started meanwhile inherit the binding from the thread that
// starts them; restore rebinds every thread there is then.
func PinProcess(cpu int) (restore func(), err error) {
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("pin this process to CPU %d: read its CPUs: %w", cpu, err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := eachThread(&set); err != nil {
		eachThread(&old)
		return nil, fmt.Errorf("pin this process to CPU %d: %w", cpu, err)
	}
	procs := runtime.GOMAXPROCS(1)
	return func() {
		runtime.GOMAXPROCS(procs)
		eachThread(&old)
	}, nil
}

// eachThread binds every thread of this process to set, listing the
// threads again until a pass finds no new one (a thread being started
// by one not yet bound would otherwise be missed).
func eachThread(set *unix.CPUSet) error {
	done := map[int]bool{}
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		fresh := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || done[tid] {
				continue
			}
			fresh, done[tid] = true, true
			if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("thread %d: %w", tid, err)
			}
		}
		if !fresh {
			return nil
		}
	}
}

// StartPinned starts cmd bound to the CPU: the thread that forks it is
// bound for the fork, and the child inherits its binding (so a Go child's
// runtime starts with GOMAXPROCS 1). The calling goroutine's thread and
// namespace are those it had.
func StartPinned(cmd *exec.Cmd, cpu int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("start %s on CPU %d: %w", cmd.Path, cpu, err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("start %s on CPU %d: %w", cmd.Path, cpu, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		// The thread stays bound: let it die with the goroutine.
		runtime.LockOSThread()
	}
	return err
}
