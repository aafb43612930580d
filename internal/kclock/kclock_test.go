//go:build linux

package kclock

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func raw(t *testing.T, clockid int32) int64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(clockid, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano()
}

// TestAtLiesBetweenKernelReadings checks each conversion of a Go time
// against the kernel's own readings taken just before and after it.
func TestAtLiesBetweenKernelReadings(t *testing.T) {
	for _, c := range []struct {
		name string
		id   int32
		conv func(time.Time) (int64, time.Duration)
	}{{"monotonic", unix.CLOCK_MONOTONIC, Monotonic}, {"realtime", unix.CLOCK_REALTIME, Realtime}} {
		for i := 0; i < 100; i++ {
			k0 := raw(t, c.id)
			at := time.Now()
			k1 := raw(t, c.id)
			got, e := c.conv(at)
			if got < k0-int64(e) || got > k1+int64(e) {
				t.Fatalf("%s: %d not within %v of [%d, %d]", c.name, got, e, k0, k1)
			}
		}
	}
	// A time ahead converts to a value ahead by as much.
	k0 := raw(t, unix.CLOCK_MONOTONIC)
	at := time.Now().Add(time.Second)
	k1 := raw(t, unix.CLOCK_MONOTONIC)
	if got, e := Monotonic(at); got < k0+int64(time.Second-e) || got > k1+int64(time.Second+e) {
		t.Errorf("a second ahead: %v after the kernel's reading before it, %v after the one after", time.Duration(got-k0), time.Duration(got-k1))
	}
}

// TestTightestReadingWins stands for this process descheduled between two
// readings (30 ms, as a loaded guest does) by a Go clock that jumps: the
// stalled readings are not used once a tight one comes, and when every one
// stalls, the error bound says so.
func TestTightestReadingWins(t *testing.T) {
	defer func() { goNow = time.Now }()
	base := time.Now()
	fake := func(brackets ...time.Duration) *int {
		calls := 0
		goNow = func() time.Time {
			i := calls / 2
			calls++
			t0 := base.Add(time.Duration(i) * 100 * time.Millisecond)
			if calls%2 == 0 && i < len(brackets) {
				return t0.Add(brackets[i])
			}
			return t0
		}
		return &calls
	}
	const stall = 30 * time.Millisecond
	calls := fake(stall, stall, 10*time.Microsecond, 0)
	r, err := Read(unix.CLOCK_MONOTONIC)
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != 5*time.Microsecond || !r.Go.Equal(base.Add(200*time.Millisecond+5*time.Microsecond)) || *calls != 6 {
		t.Errorf("two stalled readings, then a tight one: error %v at %v after base, after %d clock reads; want 5µs at 200.005ms after 3 readings", r.Error, r.Go.Sub(base), *calls)
	}
	all := make([]time.Duration, Tries)
	for i := range all {
		all[i] = stall + time.Duration(Tries-i)*time.Millisecond
	}
	calls = fake(all...)
	if r, _ = Read(unix.CLOCK_MONOTONIC); r.Error != (stall+time.Millisecond)/2 || *calls != 2*Tries {
		t.Errorf("every reading stalled: error %v after %d clock reads, want the last and tightest, %v, after %d", r.Error, *calls, (stall+time.Millisecond)/2, 2*Tries)
	}
}

// TestRealtimeMatchesWallClock: the realtime reading and at.UnixNano agree
// where nothing set the clock (to within the reading's error and Go's own).
func TestRealtimeMatchesWallClock(t *testing.T) {
	at := time.Now()
	got, e := Realtime(at)
	if d := time.Duration(got - at.UnixNano()); d < -e-time.Millisecond || d > e+time.Millisecond {
		t.Errorf("realtime %v from at's wall clock reading", d)
	}
}
