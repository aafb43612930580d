//go:build linux

package kclock

import (
	"time"

	"golang.org/x/sys/unix"
)

// Tries is how many brackets a conversion reads at most before it takes
// the tightest; Tight is a bracket good enough to stop at once.
const (
	Tries = 8
	Tight = 50 * time.Microsecond
)

// goNow is Go's clock; tests replace it to stand for a process
// descheduled between two readings.
var goNow = time.Now

// A Reading is one kernel clock's value at a Go time: Kernel ns on the
// clock at the instant Go, to within Error.
type Reading struct {
	Go     time.Time
	Kernel int64
	Error  time.Duration
}

// At is the kernel clock's value at the time at, in ns.
func (r Reading) At(at time.Time) int64 { return r.Kernel + int64(at.Sub(r.Go)) }

// Read reads the kernel clock clockid (unix.CLOCK_MONOTONIC,
// unix.CLOCK_REALTIME, ...) between two of Go's clock readings, up to Tries
// times, and keeps the tightest bracket: its midpoint is Go, half its
// length Error.
func Read(clockid int32) (Reading, error) {
	var best Reading
	for i := 0; i < Tries; i++ {
		var ts unix.Timespec
		t0 := goNow()
		if err := unix.ClockGettime(clockid, &ts); err != nil {
			return Reading{}, err
		}
		d := goNow().Sub(t0)
		if r := (Reading{Go: t0.Add(d / 2), Kernel: ts.Nano(), Error: d / 2}); i == 0 || r.Error < best.Error {
			best = r
		}
		if d <= Tight {
			break
		}
	}
	return best, nil
}

// Monotonic is the time at on CLOCK_MONOTONIC in ns (bpf_ktime_get_ns and
// perf -k CLOCK_MONOTONIC), with the error bound of the reading it rests on.
func Monotonic(at time.Time) (int64, time.Duration) {
	r, err := Read(unix.CLOCK_MONOTONIC)
	if err != nil {
		// CLOCK_MONOTONIC is in every Linux kernel Go runs on.
		panic("kclock: clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return r.At(at), r.Error
}

// Realtime is the time at on CLOCK_REALTIME in ns, the clock of the
// kernel's packet timestamps, read now: unlike at.UnixNano(), it does not
// rest on at's wall-clock reading, which Go takes apart from its monotonic
// one, and it follows a realtime clock that was set since at was taken.
func Realtime(at time.Time) (int64, time.Duration) {
	r, err := Read(unix.CLOCK_REALTIME)
	if err != nil {
		panic("kclock: clock_gettime(CLOCK_REALTIME): " + err.Error())
	}
	return r.At(at), r.Error
}
