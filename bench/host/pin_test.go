//go:build linux

package host

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
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

// allowed is the Cpus_allowed_list of /proc/self/task/TID/status.
func allowed(t *testing.T, tid string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/task/" + tid + "/status")
	if err != nil {
		if os.IsNotExist(err) {
			return "" // ended meanwhile
		}
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in thread %s's status", tid)
	return ""
}

// threads is every thread's Cpus_allowed_list, by thread ID.
func threads(t *testing.T) map[string]string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range tasks {
		if a := allowed(t, e.Name()); a != "" {
			m[e.Name()] = a
		}
	}
	return m
}

// TestPinProcess: every thread, those started while pinned too, may run
// on the CPU only and GOMAXPROCS is 1; restore puts the threads' CPUs and
// GOMAXPROCS back.
func TestPinProcess(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	restore, err := PinProcess(1)
	if err != nil {
		t.Fatal(err)
	}
	// A thread started while pinned (a locked goroutine forces one).
	started, stop := make(chan struct{}), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		close(started)
		<-stop
	}()
	<-started
	for tid, a := range threads(t) {
		if a != "1" {
			t.Errorf("pinned to CPU 1, thread %s may run on CPUs %s", tid, a)
		}
	}
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("pinned, GOMAXPROCS is %d", n)
	}
	restore()
	close(stop)
	want := before
	for tid, a := range threads(t) {
		var got unix.CPUSet
		n, _ := strconv.Atoi(tid)
		if err := unix.SchedGetaffinity(n, &got); err != nil {
			continue // ended meanwhile
		}
		if got != want {
			t.Errorf("restored, thread %s may run on CPUs %s (%d of them, want %d)", tid, a, got.Count(), want.Count())
		}
	}
	if n := runtime.GOMAXPROCS(0); n != procs {
		t.Errorf("restored, GOMAXPROCS is %d, want %d", n, procs)
	}
}

// TestStartPinned: the child runs on the CPU alone (its runtime would
// take GOMAXPROCS 1), and the thread that started it is as it was.
func TestStartPinned(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd := exec.Command("grep", "Cpus_allowed_list", "/proc/self/status")
	cmd.Stdout = &out
	if err := StartPinned(cmd, 1); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(out.String()); len(f) != 2 || f[1] != "1" {
		t.Errorf("started on CPU 1, the child says %q", out.String())
	}
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("the starting thread may run on %d CPUs after, %d before", after.Count(), before.Count())
	}
}
