//go:build linux

package bench

import (
	"runtime"

	"golang.org/x/sys/unix"
)

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
