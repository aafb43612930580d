//go:build linux

package bench

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
	"kquic.dev/bench/matrix"
)

// TestPinThread: a pinned goroutine's thread may run on its CPU only.
func TestPinThread(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	got := make(chan unix.CPUSet)
	go func() {
		pinThread(1)
		var set unix.CPUSet
		unix.SchedGetaffinity(0, &set)
		got <- set
	}()
	set := <-got
	if set.Count() != 1 || !set.IsSet(1) {
		t.Errorf("pinned to CPU 1, the thread may run on %d CPUs (CPU 1: %v)", set.Count(), set.IsSet(1))
	}
}

func TestParseAffinity(t *testing.T) {
	for _, s := range []string{"off", ""} {
		if a, err := matrix.ParseAffinity(s); a != nil || err != nil {
			t.Errorf("ParseAffinity(%q) = %v, %v", s, a, err)
		}
	}
	a, err := matrix.ParseAffinity("auto")
	if err != nil {
		t.Fatal(err)
	}
	if runtime.NumCPU() >= 2 && (a == nil || a.Client == a.Server) {
		t.Errorf("auto on %d CPUs: %v", runtime.NumCPU(), a)
	}
	if a, err := matrix.ParseAffinity("0,0"); err != nil || a.Client != 0 || a.Server != 0 {
		t.Errorf("0,0: %v, %v", a, err)
	}
	for _, bad := range []string{"1", "a,b", "-1,0", "0,4096"} {
		if _, err := matrix.ParseAffinity(bad); err == nil {
			t.Errorf("ParseAffinity(%q) accepted", bad)
		}
	}
}
