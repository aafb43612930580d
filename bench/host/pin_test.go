//go:build linux

package host

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPinThread: a pinned goroutine's thread may run on its CPU only.
func TestPinThread(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	got := make(chan unix.CPUSet)
	go func() {
		PinThread(1)
		var set unix.CPUSet
		unix.SchedGetaffinity(0, &set)
		got <- set
	}()
	set := <-got
	if set.Count() != 1 || !set.IsSet(1) {
		t.Errorf("pinned to CPU 1, the thread may run on %d CPUs (CPU 1: %v)", set.Count(), set.IsSet(1))
	}
}
