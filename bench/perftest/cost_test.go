//go:build linux

package perftest

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestLiveCostCountsCPUAndWaits(t *testing.T) {
	// The process's CPU time must grow by at least what this thread burns
	// (its own clock, exact) and by at most what its CPUs could give in the
	// time, and 20 sleeps must show as voluntary switches.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	thread := func() time.Duration {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ts.Nano())
	}
	start := time.Now()
	before, err := liveCost(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	th := thread()
	x := 0
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
		x++
	}
	burnt := thread() - th
	for range 20 {
		time.Sleep(time.Millisecond)
	}
	after, err := liveCost(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	d := after.sub(before)
	if d.CPU < burnt-2*time.Millisecond || d.CPU > wall*time.Duration(runtime.NumCPU())+10*time.Millisecond {
		t.Errorf("process CPU %v while this thread burnt %v (%d loops) in %v on %d CPUs", d.CPU, burnt, x, wall, runtime.NumCPU())
	}
	if d.Voluntary < 10 {
		t.Errorf("%d voluntary context switches after 20 sleeps, want at least 10", d.Voluntary)
	}
}

func TestLiveCostOfNoProcess(t *testing.T) {
	// PIDs are below pid_max: that one never runs.
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := liveCost(pid); err == nil || !strings.Contains(err.Error(), "process") {
		t.Errorf("liveCost of no process: %v, want an error naming it", err)
	}
}

// burnEnv makes the test binary, run as a child, burn CPU and sleep
// (TestProcessCost).
const burnEnv = "KQUIC_PERFTEST_BURN"

func TestMain(m *testing.M) {
	if os.Getenv(burnEnv) != "" {
		for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		}
		time.Sleep(50 * time.Millisecond)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestProcessCost(t *testing.T) {
	// A child (this test binary) that burns CPU and then sleeps: its rusage
	// has both.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), burnEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child: %v: %s", err, out)
	}
	c, ok := processCost(cmd.ProcessState)
	if !ok {
		t.Fatal("no rusage for an ended child")
	}
	if c.CPU <= 0 || c.Voluntary < 1 {
		t.Errorf("cost %+v: want CPU time and at least one voluntary switch (the sleep)", c)
	}
	if _, ok := processCost(nil); ok {
		t.Error("a process that never started has a cost")
	}
}

func TestWriteCosts(t *testing.T) {
	// 32 MiB runs: 3.2s of CPU is 100ms/MiB, 320 switches 10/MiB.
	cost := func(ms int, v, i int64) Cost {
		return Cost{CPU: time.Duration(ms) * time.Millisecond, Voluntary: v, Involuntary: i}
	}
	r := &CompareResult{Options: CompareOptions{Sizes: []int{1024, 65536}, Runs: 3, Total: 32 << 20}, Costs: map[int]map[Pairing][]RunCost{
		1024: {
			Pairings[0]: {{Client: cost(3200, 32, 64), Server: cost(1280, 320, 32), ServerOK: true}},
			Pairings[1]: {
				{Client: cost(3000, 3200, 1600), Server: cost(960, 320, 32), ServerOK: true},
				{Client: cost(4000, 6400, 3200), ServerOK: false},
				{Client: cost(3800, 4800, 2400), Server: cost(1600, 640, 64), ServerOK: true},
			},
		},
		65536: {Pairings[3]: {{Client: cost(1600, 0, 0)}}},
	}}
	var b strings.Builder
	r.WriteCosts(&b)
	out := b.String()
	for _, want := range []string{
		"cli 100ms 1v 2i, srv 40ms 10v 1i",    // C -> C
		"cli 119ms 150v 75i, srv 40ms 15v 2i", // Go -> C: medians; the server's of the two it has
		"cli 50ms 0v 0i ",                     // Go -> Go at 64 KiB, no server counters
		"n/a",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("costs lack %q:\n%s", want, out)
		}
	}
	var empty strings.Builder
	(&CompareResult{}).WriteCosts(&empty)
	if empty.Len() != 0 {
		t.Errorf("no costs printed %q, want nothing", empty.String())
	}
}
