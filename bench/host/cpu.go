//go:build linux

package host

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"kquic.dev/bench/results"
)

// CPUSnapshot is a point-in-time reading of a host's CPU counters: the
// machine's from /proc/stat (in USER_HZ ticks) and this process's. A kqbench
// server sends its snapshots to the client, which computes the server's CPU
// with CPUBetween.
type CPUSnapshot struct {
	At      time.Time `json:"at"`
	User    uint64    `json:"user"`
	Nice    uint64    `json:"nice"`
	Sys     uint64    `json:"system"`
	Idle    uint64    `json:"idle"`
	IOWait  uint64    `json:"iowait"`
	IRQ     uint64    `json:"irq"`
	Softirq uint64    `json:"softirq"`
	Steal   uint64    `json:"steal"`
	// CPUs is how many CPUs /proc/stat lists (those online).
	CPUs int `json:"cpus,omitempty"`
	// PerCPU are each CPU's counters, by CPU number.
	PerCPU []CPUTicks `json:"per_cpu,omitempty"`
	// ProcUser and ProcSys are the process's CPU time (getrusage).
	ProcUser time.Duration `json:"proc_user"`
	ProcSys  time.Duration `json:"proc_system"`
	// Error says why the counters could not be read (SnapshotCPU); a
	// sample over such a snapshot has no CPU figures, and says why.
	Error string `json:"error,omitempty"`
}

// SnapshotCPU is ReadCPU for a sample's window: a reading that failed
// keeps its error (Error) for CPUBetween to report, instead of stopping
// the sample.
func SnapshotCPU() CPUSnapshot {
	s, err := ReadCPU()
	if err != nil {
		s.Error = fmt.Sprintf("read /proc/stat: %v", err)
	}
	return s
}

// CPUOf is the CPU between two snapshots of a window, or, as the sample
// records it (Sample.CPUUnavailable), why there is none.
func CPUOf(a, b CPUSnapshot) (results.CPU, string) {
	c, err := CPUBetween(a, b)
	if err != nil {
		return results.CPU{}, err.Error()
	}
	return c, ""
}

// AddServerCPU sets the sample's ServerCPU from the server's two snapshots
// (two-host mode), or adds why it could not to CPUUnavailable.
func AddServerCPU(smp *results.Sample, a, b *CPUSnapshot) {
	if a == nil || b == nil {
		return // single-host mode: CPU covers both ends
	}
	c, err := CPUBetween(*a, *b)
	if err != nil {
		smp.CPUUnavailable = strings.TrimPrefix(smp.CPUUnavailable+"; server: "+err.Error(), "; ")
		return
	}
	smp.ServerCPU = &c
}

// ReadCPU reads this host's CPU counters.
func ReadCPU() (CPUSnapshot, error) {
	s := CPUSnapshot{At: time.Now()}
	f, err := os.Open("/proc/stat")
	if err != nil {
		return s, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 9 && len(fs[0]) > 3 && strings.HasPrefix(fs[0], "cpu") {
			s.CPUs++
			n, err := strconv.Atoi(fs[0][3:])
			if err != nil || n > 1<<16 {
				continue
			}
			var v [8]uint64
			for i := range v {
				v[i], _ = strconv.ParseUint(fs[i+1], 10, 64)
			}
			for len(s.PerCPU) <= n {
				s.PerCPU = append(s.PerCPU, CPUTicks{Offline: true})
			}
			s.PerCPU[n] = CPUTicks{Busy: v[0] + v[1] + v[2] + v[5] + v[6], Softirq: v[6], NotBusy: v[3] + v[4], Steal: v[7],
				User: v[0] + v[1], System: v[2]}
			continue
		}
		if len(fs) < 9 || fs[0] != "cpu" {
			continue
		}
		v := make([]uint64, 8)
		for i := range v {
			v[i], _ = strconv.ParseUint(fs[i+1], 10, 64)
		}
		s.User, s.Nice, s.Sys, s.Idle, s.IOWait, s.IRQ, s.Softirq, s.Steal = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.ProcUser = time.Duration(ru.Utime.Nano())
		s.ProcSys = time.Duration(ru.Stime.Nano())
	}
	return s, sc.Err()
}

// clockTicks is USER_HZ, the unit of /proc/stat (100 on every Linux
// architecture kquic runs on).
const clockTicks = 100

// CPUBetween is the CPU used between two snapshots of the same host.
func CPUBetween(a, b CPUSnapshot) (results.CPU, error) {
	if err := errors.Join(snapErr(a), snapErr(b)); err != nil {
		return results.CPU{}, fmt.Errorf("cpu: %w", err)
	}
	wall := b.At.Sub(a.At).Seconds()
	if wall <= 0 {
		return results.CPU{}, fmt.Errorf("cpu: empty interval")
	}
	cores := func(d uint64) float64 { return float64(d) / clockTicks / wall }
	user := (b.User + b.Nice) - (a.User + a.Nice)
	sys := b.Sys - a.Sys
	soft := b.Softirq - a.Softirq
	irq := b.IRQ - a.IRQ
	c := results.CPU{
		BusyCores:    cores(user + sys + soft + irq),
		UserCores:    cores(user),
		SystemCores:  cores(sys),
		SoftirqCores: cores(soft),
		StealCores:   cores(b.Steal - a.Steal),
		ProcessCores: ((b.ProcUser + b.ProcSys) - (a.ProcUser + a.ProcSys)).Seconds() / wall,
	}
	if n := min(a.CPUs, b.CPUs); n > 0 && a.CPUs == b.CPUs {
		// The clock's busy time, and the ticks' split scaled to it.
		notBusy := cores((b.Idle + b.IOWait) - (a.Idle + a.IOWait))
		busy := max(float64(n)-notBusy-c.StealCores, 0)
		if ticked := c.BusyCores; ticked > 0 {
			f := busy / ticked
			c.UserCores *= f
			c.SystemCores *= f
			c.SoftirqCores *= f
		}
		c.BusyCores = busy
	}
	return c, nil
}

func snapErr(s CPUSnapshot) error {
	if s.Error != "" {
		return errors.New(s.Error)
	}
	return nil
}

// CPUTicks are one CPU's counters from /proc/stat, in USER_HZ ticks: busy
// (user, nice, system, irq, softirq), softirq alone, idle and iowait, and
// steal; user (with nice) and system alone (absent from a kqbench server's
// snapshots before they were read: zero there).
type CPUTicks struct {
	Busy    uint64 `json:"busy"`
	Softirq uint64 `json:"softirq"`
	NotBusy uint64 `json:"not_busy"`
	Steal   uint64 `json:"steal"`
	User    uint64 `json:"user,omitempty"`
	System  uint64 `json:"system,omitempty"`
	Offline bool   `json:"offline,omitempty"`
}

// CoresBetween is every online CPU's time between two snapshots, split
// into user, system and softirq (PinnedBetween's busy time, the ticks'
// split scaled to it), by CPU number; nil when the snapshots have no
// per-CPU counters.
func CoresBetween(a, b CPUSnapshot) []results.CoreCPU {
	wall := b.At.Sub(a.At).Seconds()
	if wall <= 0 || a.Error != "" || b.Error != "" {
		return nil
	}
	var out []results.CoreCPU
	for n := 0; n < min(len(a.PerCPU), len(b.PerCPU)); n++ {
		x, y := a.PerCPU[n], b.PerCPU[n]
		if x.Offline || y.Offline {
			continue
		}
		p := PinnedBetween(a, b, n)
		c := results.CoreCPU{CPU: n, Busy: p.Busy}
		if ticked := float64(y.Busy - x.Busy); ticked > 0 {
			f := p.Busy / ticked
			c.User, c.System, c.Softirq = float64(y.User-x.User)*f, float64(y.System-x.System)*f, float64(y.Softirq-x.Softirq)*f
		}
		out = append(out, c)
	}
	return out
}

// PinnedBetween is CPU n's time between two snapshots.
func PinnedBetween(a, b CPUSnapshot, n int) results.PinnedCPU {
	p := results.PinnedCPU{CPU: n}
	wall := b.At.Sub(a.At).Seconds()
	if n < 0 || n >= len(a.PerCPU) || n >= len(b.PerCPU) || wall <= 0 {
		return p
	}
	x, y := a.PerCPU[n], b.PerCPU[n]
	frac := func(d uint64) float64 { return float64(d) / clockTicks / wall }
	p.Busy = min(max(1-frac(y.NotBusy-x.NotBusy)-frac(y.Steal-x.Steal), 0), 1)
	if ticked := frac(y.Busy - x.Busy); ticked > 0 {
		p.Softirq = frac(y.Softirq-x.Softirq) * p.Busy / ticked
	}
	return p
}
