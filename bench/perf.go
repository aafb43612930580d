//go:build linux

package bench

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// cycleCounters count CPU cycles on every CPU (all processes, kernel
// included), where the machine exposes hardware performance counters.
type cycleCounters struct{ fds []int }

// openCycles opens one counter per CPU. It fails on machines without a
// PMU (most VMs) or without CAP_PERFMON, and says which.
func openCycles() (*cycleCounters, error) {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_HARDWARE,
		Config: unix.PERF_COUNT_HW_CPU_CYCLES,
		Size:   uint32(binary.Size(unix.PerfEventAttr{})),
	}
	c := &cycleCounters{}
	for cpu := 0; cpu < runtime.NumCPU(); cpu++ {
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("hardware cycle counters unavailable (perf_event_open on CPU %d: %v)", cpu, err)
		}
		c.fds = append(c.fds, fd)
	}
	return c, nil
}

// read returns the cycles counted so far on all CPUs.
func (c *cycleCounters) read() (uint64, error) {
	var total uint64
	buf := make([]byte, 8)
	for _, fd := range c.fds {
		if _, err := unix.Read(fd, buf); err != nil {
			return 0, fmt.Errorf("read cycle counter: %w", err)
		}
		total += binary.LittleEndian.Uint64(buf)
	}
	return total, nil
}

func (c *cycleCounters) close() {
	for _, fd := range c.fds {
		unix.Close(fd)
	}
	c.fds = nil
}
