//go:build linux

package counters

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/kclock"
)

// monotonic is CLOCK_MONOTONIC in ns, bpf_ktime_get_ns's clock.
func monotonic() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// Begin opens the window the result covers at the time at (which may be
// ahead: the runner gives every probe the same instants): the eBPF
// counters count events from then by the kernel's clock (what was counted
// from Start is left out; attaching is slow under emulation), and the
// /proc/net baselines are read at that instant. Without Begin, the result
// covers Start to Stop. Begin is quick: it writes one map entry, and reads
// the /proc/net files (opened in Start) at once only if at has passed.
func (s *Set) Begin(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.windowed {
		return
	}
	s.windowed = true
	if s.window != nil {
		s.began = monotonicAt(at)
		s.setWindow(windowValue{Begin: s.began}, "open")
	}
	s.procAt(at, func(e *endInfo, v map[string]int64) {
		if v != nil {
			e.proc = v
		}
	})
}

// procAt reads every end's /proc/net counters at the time at and hands
// them to store: at once if at has passed, else from a timer, which Stop
// waits for. Call with s.mu held.
func (s *Set) procAt(at time.Time, store func(e *endInfo, v map[string]int64)) {
	read := func() {
		for i := range s.ends {
			store(&s.ends[i], s.ends[i].files.read())
		}
	}
	d := time.Until(at)
	if d <= 0 {
		read()
		return
	}
	s.procWG.Add(1)
	time.AfterFunc(d, func() {
		defer s.procWG.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.stopped {
			read()
		}
	})
}

// setWindow writes the window map, and notes it in the result if the
// instant it sets had already passed (events then fell on the wrong side).
func (s *Set) setWindow(w windowValue, what string) {
	if err := s.window.Put(uint32(0), w); err != nil {
		s.errs = append(s.errs, fmt.Errorf("counters: %s the window: %w", what, err))
		return
	}
	at := w.Begin
	if w.End != 0 {
		at = w.End
	}
	if late := time.Duration(monotonic() - at); late >= time.Millisecond && late < time.Hour {
		s.missing["window"] = fmt.Sprintf("the window was set to %s %v after it did (this process was not run in time): counts near its edges may be off", what, late.Round(time.Millisecond))
	}
}

// End closes the window at the time at: what happens after it is left
// out; the /proc/net counters are read at that instant too. Without End,
// the window runs until Stop.
func (s *Set) End(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || !s.windowed || s.ended {
		return
	}
	s.ended = true
	if s.window != nil {
		s.setWindow(windowValue{Begin: s.began, End: monotonicAt(at)}, "close")
	}
	s.procAt(at, func(e *endInfo, v map[string]int64) { e.procEnd = v })
}

// monotonicAt is the time at on CLOCK_MONOTONIC, in ns (kclock: not off by
// however long this process waited between two clock readings).
func monotonicAt(at time.Time) uint64 {
	ns, _ := kclock.Monotonic(at)
	return uint64(ns)
}

// inWindow keeps the window's entries (epoch 1) when Begin was called,
// else all of them, summed over epochs.
func inWindow(dumps map[string]map[mapKey]mapValue, windowed bool) map[string]map[mapKey]mapValue {
	out := map[string]map[mapKey]mapValue{}
	for name, d := range dumps {
		od := map[mapKey]mapValue{}
		for k, v := range d {
			if windowed && k.Epoch != epochIn {
				continue
			}
			k.Epoch = 0
			sum := od[k]
			od[k] = mapValue{Count: sum.Count + v.Count, Bytes: sum.Bytes + v.Bytes}
		}
		out[name] = od
	}
	return out
}
