//go:build linux

package host

import (
	"runtime"

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
