package bench

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPU is the processor time used during a sample, in CPU-seconds per second
// of wall time ("cores"): the whole machine's, split by kind, from
// /proc/stat (both ends run on it in single-host mode), and this process's
// own, from getrusage.
type CPU struct {
	BusyCores    float64 `json:"busy_cores"`
	UserCores    float64 `json:"user_cores"`
	SystemCores  float64 `json:"system_cores"`
	SoftirqCores float64 `json:"softirq_cores"`
	ProcessCores float64 `json:"process_cores"`
	// CyclesPerByte is filled where hardware counters exist.
	CyclesPerByte float64 `json:"cycles_per_byte,omitempty"`
}

// cpuSnap is a point-in-time reading.
type cpuSnap struct {
	at                                 time.Time
	user, nice, sys, idle, iowait, irq uint64
	softirq, steal                     uint64
	procUser, procSys                  time.Duration
}

func readCPU() (cpuSnap, error) {
	s := cpuSnap{at: time.Now()}
	f, err := os.Open("/proc/stat")
	if err != nil {
		return s, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 9 || fs[0] != "cpu" {
			continue
		}
		v := make([]uint64, 8)
		for i := range v {
			v[i], _ = strconv.ParseUint(fs[i+1], 10, 64)
		}
		s.user, s.nice, s.sys, s.idle, s.iowait, s.irq, s.softirq, s.steal = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		break
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.procUser = time.Duration(ru.Utime.Nano())
		s.procSys = time.Duration(ru.Stime.Nano())
	}
	return s, sc.Err()
}

// clockTicks is USER_HZ, the unit of /proc/stat (100 on every Linux
// architecture kquic runs on).
const clockTicks = 100

func cpuBetween(a, b cpuSnap) (CPU, error) {
	wall := b.at.Sub(a.at).Seconds()
	if wall <= 0 {
		return CPU{}, fmt.Errorf("cpu: empty interval")
	}
	cores := func(d uint64) float64 { return float64(d) / clockTicks / wall }
	user := (b.user + b.nice) - (a.user + a.nice)
	sys := b.sys - a.sys
	soft := b.softirq - a.softirq
	irq := b.irq - a.irq
	return CPU{
		BusyCores:    cores(user + sys + soft + irq),
		UserCores:    cores(user),
		SystemCores:  cores(sys),
		SoftirqCores: cores(soft),
		ProcessCores: ((b.procUser + b.procSys) - (a.procUser + a.procSys)).Seconds() / wall,
	}, nil
}
