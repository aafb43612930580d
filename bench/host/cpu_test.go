//go:build linux

package host

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/bench/results"
)

// TestCPUAddsUp: while this process keeps every CPU busy, the machine's
// busy time covers the process's (the process is part of the machine), and
// neither exceeds the CPUs there are. Under an emulated CPU the kernel's
// ticks fall behind the clock, so busy time counted in ticks alone fell
// short of the process's (1.41 against 1.59 cores on 2 CPUs).
func TestCPUAddsUp(t *testing.T) {
	n := runtime.NumCPU()
	a, err := ReadCPU()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := time.Now().Add(time.Second)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := 0
			for time.Now().Before(stop) {
				for j := 0; j < 1000; j++ {
					x += j
				}
			}
			_ = x
		}()
	}
	wg.Wait()
	b, err := ReadCPU()
	if err != nil {
		t.Fatal(err)
	}
	c, err := CPUBetween(a, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d CPUs: busy %.2f (user %.2f, system %.2f, softirq %.2f, steal %.2f), process %.2f", n, c.BusyCores, c.UserCores, c.SystemCores, c.SoftirqCores, c.StealCores, c.ProcessCores)
	const slack = 0.05 // clock reads and the last tick
	if c.ProcessCores > c.BusyCores+slack*float64(n) {
		t.Errorf("the process used %.2f cores, more than the machine's busy %.2f", c.ProcessCores, c.BusyCores)
	}
	if c.BusyCores > float64(n)*(1+slack) {
		t.Errorf("busy %.2f cores on %d CPUs", c.BusyCores, n)
	}
	if c.ProcessCores <= 0 || c.BusyCores <= 0 {
		t.Errorf("nothing counted: busy %.2f, process %.2f", c.BusyCores, c.ProcessCores)
	}
	if sum := c.UserCores + c.SystemCores + c.SoftirqCores; sum > c.BusyCores+slack {
		t.Errorf("the kinds add up to %.2f, more than busy %.2f", sum, c.BusyCores)
	}
}

// TestPerByte: cycles and instructions per byte of all CPUs and of one,
// and nothing where a reading is missing or a counter went back.
func TestPerByte(t *testing.T) {
	a := Counts{cycles: []uint64{100, 1000}, instr: []uint64{50, 500}}
	b := Counts{cycles: []uint64{300, 5000}, instr: []uint64{150, 2500}}
	if c, i := a.PerByte(b, -1, 100); c != 42 || i != 21 {
		t.Errorf("all CPUs: %v cycles/B, %v instructions/B; want 42, 21", c, i)
	}
	if c, i := a.PerByte(b, 1, 100); c != 40 || i != 20 {
		t.Errorf("CPU 1: %v, %v; want 40, 20", c, i)
	}
	if c, i := a.PerByte(Counts{cycles: []uint64{300, 5000}}, 0, 100); c != 2 || i != 0 {
		t.Errorf("no instruction counters: %v, %v; want 2, 0", c, i)
	}
	if c, _ := a.PerByte(Counts{cycles: []uint64{50, 5000}}, 0, 100); c != 0 {
		t.Errorf("a counter that went back: %v cycles/B", c)
	}
	if c, _ := a.PerByte(b, 5, 100); c != 0 {
		t.Errorf("a CPU not counted: %v cycles/B", c)
	}
}

// TestCPUBetweenUnreadable: a window whose counters could not be read has
// no CPU figures, and says why, for the sample to record.
func TestCPUBetweenUnreadable(t *testing.T) {
	a := SnapshotCPU()
	b := a
	b.At = a.At.Add(time.Second)
	b.Error = "read /proc/stat: permission denied"
	if _, err := CPUBetween(a, b); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("CPUBetween over an unreadable snapshot = %v", err)
	}
	cpu, note := CPUOf(a, b)
	if cpu != (results.CPU{}) || !strings.Contains(note, "permission denied") {
		t.Errorf("CPUOf = %+v, %q", cpu, note)
	}
	var smp results.Sample
	AddServerCPU(&smp, &a, &b)
	if smp.ServerCPU != nil || !strings.HasPrefix(smp.CPUUnavailable, "server: cpu: read /proc/stat") {
		t.Errorf("server CPU %+v, note %q", smp.ServerCPU, smp.CPUUnavailable)
	}
	if _, note := CPUOf(a, func() CPUSnapshot { c := a; c.At = a.At.Add(time.Second); return c }()); note != "" {
		t.Errorf("a readable window: %q", note)
	}
}

// TestCoresBetween: a thread spinning in user space on one CPU makes that
// core busy, mostly in user time, and every core's split adds up to no
// more than its busy time.
func TestCoresBetween(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: no core to tell apart")
	}
	const cpu = 1
	a, err := ReadCPU()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		PinThread(cpu)
		x := 0
		for stop := time.Now().Add(time.Second); time.Now().Before(stop); {
			for j := 0; j < 1000; j++ {
				x += j
			}
		}
		_ = x
	}()
	<-done
	b, err := ReadCPU()
	if err != nil {
		t.Fatal(err)
	}
	cores := CoresBetween(a, b)
	if len(cores) != runtime.NumCPU() {
		t.Fatalf("%d cores, want %d: %+v", len(cores), runtime.NumCPU(), cores)
	}
	for _, c := range cores {
		t.Logf("cpu%d: busy %.2f = user %.2f + system %.2f + softirq %.2f (+ irq)", c.CPU, c.Busy, c.User, c.System, c.Softirq)
		if sum := c.User + c.System + c.Softirq; sum > c.Busy+1e-9 || c.Busy > 1 {
			t.Errorf("cpu%d: the kinds add up to %.2f, busy %.2f", c.CPU, sum, c.Busy)
		}
	}
	// The machine is shared (other work may run on CPU 1 too), but the
	// spinner alone keeps it at least half busy in user time.
	if c := cores[cpu]; c.Busy < 0.5 || c.User < 0.4 {
		t.Errorf("cpu%d spun for the whole second: busy %.2f, user %.2f", cpu, c.Busy, c.User)
	}
	if CoresBetween(b, a) != nil {
		t.Error("an interval backwards has cores")
	}
}
