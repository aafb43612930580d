//go:build linux

package host

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Cycles count CPU cycles and instructions on every CPU (all
// processes, kernel included), where the machine exposes hardware
// performance counters.
type Cycles struct{ cycles, instr []int }

// Counts are the counters' values, by CPU.
type Counts struct{ cycles, instr []uint64 }

// OpenCycles opens a cycles counter per CPU, and an instructions counter
// per CPU where it can. It fails on machines without a PMU (most VMs) or
// without CAP_PERFMON, and says which.
func OpenCycles() (*Cycles, error) {
	open := func(config uint64, cpu int) (int, error) {
		attr := unix.PerfEventAttr{
			Type:   unix.PERF_TYPE_HARDWARE,
			Config: config,
			Size:   uint32(binary.Size(unix.PerfEventAttr{})),
		}
		return unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	}
	c := &Cycles{}
	for cpu := 0; cpu < runtime.NumCPU(); cpu++ {
		fd, err := open(unix.PERF_COUNT_HW_CPU_CYCLES, cpu)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("hardware cycle counters unavailable (perf_event_open on CPU %d: %v)", cpu, err)
		}
		c.cycles = append(c.cycles, fd)
	}
	for cpu := 0; cpu < runtime.NumCPU(); cpu++ {
		fd, err := open(unix.PERF_COUNT_HW_INSTRUCTIONS, cpu)
		if err != nil {
			for _, fd := range c.instr {
				unix.Close(fd)
			}
			c.instr = nil
			break
		}
		c.instr = append(c.instr, fd)
	}
	return c, nil
}

// Read returns the counts so far, per CPU.
func (c *Cycles) Read() (Counts, error) {
	var p Counts
	buf := make([]byte, 8)
	for _, l := range []struct {
		fds []int
		out *[]uint64
	}{{c.cycles, &p.cycles}, {c.instr, &p.instr}} {
		for _, fd := range l.fds {
			if _, err := unix.Read(fd, buf); err != nil {
				return p, fmt.Errorf("read a hardware counter: %w", err)
			}
			*l.out = append(*l.out, binary.LittleEndian.Uint64(buf))
		}
	}
	return p, nil
}

// Close releases the counters.
func (c *Cycles) Close() {
	for _, fd := range append(c.cycles, c.instr...) {
		unix.Close(fd)
	}
	c.cycles, c.instr = nil, nil
}

// perCPUDelta is b - a on one CPU (-1: every CPU), and whether it is known.
func perCPUDelta(a, b []uint64, cpu int) (uint64, bool) {
	if len(a) == 0 || len(a) != len(b) {
		return 0, false
	}
	if cpu >= 0 {
		if cpu >= len(a) || b[cpu] < a[cpu] {
			return 0, false
		}
		return b[cpu] - a[cpu], true
	}
	var d uint64
	for i := range a {
		if b[i] >= a[i] {
			d += b[i] - a[i]
		}
	}
	return d, true
}

// PerByte is the cycles and instructions per byte of one CPU (-1: all)
// between two readings.
func (p Counts) PerByte(b Counts, cpu int, bytes int64) (cycles, instr float64) {
	if bytes <= 0 {
		return 0, 0
	}
	if d, ok := perCPUDelta(p.cycles, b.cycles, cpu); ok {
		cycles = float64(d) / float64(bytes)
	}
	if d, ok := perCPUDelta(p.instr, b.instr, cpu); ok {
		instr = float64(d) / float64(bytes)
	}
	return cycles, instr
}
