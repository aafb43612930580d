//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"kquic.dev/bench/results"
)

// fakeMode is a deterministic stand-in for a mode's samples: cell k's n-th
// kept sample has goodput bps(k, n); windows listed in steal are disturbed,
// in fail fail. It records the order of the windows taken.
type fakeMode struct {
	bps    func(k, n int) float64
	steal  map[[2]int]bool // {cell, window}
	fail   map[[2]int]bool
	cancel int // cancel the run at this window (counted over all cells); 0: never
	stop   context.CancelFunc

	order   []int
	windows map[int]int
	kept    map[int]int
}

func (f *fakeMode) take(_ context.Context, k int) (results.Sample, error) {
	if f.windows == nil {
		f.windows, f.kept = map[int]int{}, map[int]int{}
	}
	w := f.windows[k]
	f.windows[k]++
	f.order = append(f.order, k)
	if f.cancel > 0 && len(f.order) == f.cancel {
		f.stop()
		return results.Sample{}, context.Canceled
	}
	if f.fail[[2]int{k, w}] {
		return results.Sample{}, fmt.Errorf("cell %d window %d: boom", k, w)
	}
	s := results.Sample{Bps: f.bps(k, f.kept[k]), Bytes: 1000, Seconds: 1}
	if f.steal[[2]int{k, w}] {
		s.CPU.StealCores = 0.3
		return s, nil
	}
	f.kept[k]++
	return s, nil
}

// run schedules n cells with the fake mode and returns them with the
// progress's last done and total counts.
func (f *fakeMode) run(t *testing.T, ctx context.Context, slots []*slot, repeat, maxSamples int) (done, total int, err error) {
	t.Helper()
	for _, s := range slots {
		done += s.taken
		total += max(repeat, s.taken)
	}
	saved := 0
	s := &schedule{repeat: repeat, maxSamples: maxSamples, take: f.take,
		progress: func(k, d, more int) {
			done += d
			total += more
			if done > total {
				t.Errorf("progress %d of %d", done, total)
			}
		},
		measured: func(int) error { saved++; return nil }}
	err = s.run(ctx, slots)
	for k, sl := range slots {
		s.finish(k, sl)
	}
	if taken := len(f.order); saved != taken && err == nil {
		t.Errorf("%d samples handed over to be saved, of %d taken", saved, taken)
	}
	return done, total, err
}

func newSlots(n int) []*slot {
	out := make([]*slot, n)
	for i := range out {
		out[i] = &slot{res: &results.CellResult{Key: fmt.Sprint("cell", i)}}
	}
	return out
}

func narrow(k, n int) float64 { return 100e6 + float64(k)*1e6 + float64(n%2)*1e5 }

func TestScheduleRoundRobin(t *testing.T) {
	f := &fakeMode{bps: narrow}
	slots := newSlots(3)
	done, total, err := f.run(t, context.Background(), slots, 3, 9)
	if err != nil {
		t.Fatal(err)
	}
	// Round i starts at cell i: the order rotates.
	if want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1}; !slices.Equal(f.order, want) {
		t.Errorf("order %v, want %v", f.order, want)
	}
	if done != 9 || total != 9 {
		t.Errorf("progress %d of %d, want 9 of 9", done, total)
	}
	for _, s := range slots {
		if len(s.res.Samples) != 3 || s.res.WideSpread {
			t.Errorf("%s: %d samples, wide %v", s.res.Key, len(s.res.Samples), s.res.WideSpread)
		}
	}
}

// TestScheduleStealRetake: a disturbed sample is set aside and taken again
// at once, only once; the progress counts both windows, so it ends at the
// windows taken, kept or set aside.
func TestScheduleStealRetake(t *testing.T) {
	f := &fakeMode{bps: narrow, steal: map[[2]int]bool{{1, 0}: true, {2, 1}: true, {2, 2}: true}}
	slots := newSlots(3)
	done, total, err := f.run(t, context.Background(), slots, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 1, 2, 1, 2, 2, 0, 2, 0, 1}; !slices.Equal(f.order, want) {
		t.Errorf("order %v, want %v", f.order, want)
	}
	windows := 0
	for k, s := range slots {
		windows += len(s.res.Samples) + len(s.res.Disturbed)
		if len(s.res.Samples) != 3 {
			t.Errorf("cell %d: %d samples kept, want 3", k, len(s.res.Samples))
		}
	}
	if n := len(slots[1].res.Disturbed); n != 1 {
		t.Errorf("cell 1: %d set aside, want 1", n)
	}
	// Cell 2's retake was disturbed too: kept, with its steal (the tables
	// say so), not taken a third time.
	if n := len(slots[2].res.Disturbed); n != 1 || !slots[2].res.Samples[1].Disturbed() {
		t.Errorf("cell 2: %d set aside, sample 2 disturbed %v; want 1 and the retake kept", n, slots[2].res.Samples[1].Disturbed())
	}
	if done != windows || total != windows || windows != 11 {
		t.Errorf("progress %d of %d, want %d of %d (the windows taken)", done, total, windows, windows)
	}
}

// TestScheduleAdaptive: a cell still wide after Repeat gets more rounds up
// to maxSamples; a narrow one stops at Repeat; the total grows by the
// rounds added.
func TestScheduleAdaptive(t *testing.T) {
	scatter := func(k, n int) float64 {
		if k == 0 {
			return []float64{50e6, 150e6, 80e6, 130e6, 60e6, 140e6, 70e6, 120e6, 100e6}[n]
		}
		return narrow(k, n)
	}
	f := &fakeMode{bps: scatter}
	slots := newSlots(2)
	done, total, err := f.run(t, context.Background(), slots, 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(slots[0].res.Samples); n != 6 || !slots[0].res.WideSpread {
		t.Errorf("scattering cell: %d samples (wide %v), want 6: wide to the end", n, slots[0].res.WideSpread)
	}
	if n := len(slots[1].res.Samples); n != 3 {
		t.Errorf("narrow cell: %d samples, want 3", n)
	}
	if done != 9 || total != 9 {
		t.Errorf("progress %d of %d, want 9 of 9", done, total)
	}
	// Each extra sample follows a wide summary of the ones before.
	for n := 3; n < 6; n++ {
		p := results.CellResult{Samples: slots[0].res.Samples[:n]}
		if p.Summarize(); !p.WideSpread {
			t.Errorf("sample %d taken after a narrow spread", n+1)
		}
	}
}

// TestScheduleFailure: a failed sample fails its cell, which takes no more;
// its windows not taken still count done at the end.
func TestScheduleFailure(t *testing.T) {
	f := &fakeMode{bps: narrow, fail: map[[2]int]bool{{1, 1}: true}}
	slots := newSlots(3)
	done, total, err := f.run(t, context.Background(), slots, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r := slots[1].res; r.Status != results.StatusFailed || len(r.Samples) != 1 || f.windows[1] != 2 {
		t.Errorf("failed cell: status %q, %d samples, %d windows", r.Status, len(r.Samples), f.windows[1])
	}
	if done != 9 || total != 9 {
		t.Errorf("progress %d of %d, want 9 of 9", done, total)
	}
}

// TestScheduleCancelResume: cancelled mid-run, the schedule returns the
// context's error with what it measured; scheduled again with those
// samples it takes only the rest, and ends with what one uninterrupted run
// has.
func TestScheduleCancelResume(t *testing.T) {
	scatter := func(k, n int) float64 {
		if k == 2 {
			return []float64{50e6, 150e6, 80e6, 130e6, 60e6, 140e6}[n]
		}
		return narrow(k, n)
	}
	whole := &fakeMode{bps: scatter, steal: map[[2]int]bool{{0, 1}: true}}
	want := newSlots(3)
	if _, _, err := whole.run(t, context.Background(), want, 3, 5); err != nil {
		t.Fatal(err)
	}
	for _, stopAt := range []int{2, 5, 9, 12} {
		ctx, cancel := context.WithCancel(context.Background())
		cut := &fakeMode{bps: scatter, steal: map[[2]int]bool{{0, 1}: true}, cancel: stopAt, stop: cancel}
		slots := newSlots(3)
		if _, _, err := cut.run(t, ctx, slots, 3, 5); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled at window %d: %v", stopAt, err)
		}
		cancel()
		// Resume: the kept samples stay, as a results file has them.
		again := newSlots(3)
		for k, s := range slots {
			again[k].res.Samples = s.res.Samples
			again[k].taken = len(s.res.Samples)
		}
		rest := &fakeMode{bps: func(k, n int) float64 { return scatter(k, n+len(slots[k].res.Samples)) }}
		done, total, err := rest.run(t, context.Background(), again, 3, 5)
		if err != nil {
			t.Fatal(err)
		}
		if done != total {
			t.Errorf("cancelled at %d, resumed: progress %d of %d", stopAt, done, total)
		}
		for k := range want {
			var got, exp []float64
			for _, s := range again[k].res.Samples {
				got = append(got, s.Bps)
			}
			for _, s := range want[k].res.Samples {
				exp = append(exp, s.Bps)
			}
			if !slices.Equal(got, exp) {
				t.Errorf("cancelled at window %d, resumed: cell %d samples %v, want %v", stopAt, k, got, exp)
			}
		}
	}
}
