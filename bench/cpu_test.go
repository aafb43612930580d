//go:build linux

package bench

import (
	"runtime"
	"sync"
	"testing"
	"time"
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
