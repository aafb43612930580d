//go:build linux

package bench

import (
	"context"

	"kquic.dev/bench/results"
)

// A slot is one cell of a device configuration as the schedule sees it:
// its result so far, and the sample windows it has taken.
type slot struct {
	res *results.CellResult
	// taken counts the windows measured for the cell: kept samples, those
	// set aside as disturbed, and one that failed.
	taken int
	// owed is what the cell adds to the progress's total: Repeat, one more
	// per retake and per extra round.
	owed int
}

func (s *slot) failed() bool { return s.res.Status == results.StatusFailed }

// schedule runs the samples of one device configuration's cells: Repeat
// rounds round-robin, the order rotating by one each round (round i starts
// at cell i), so that a drift of the machine spreads over every cell; a
// sample during which the hypervisor took over MaxSteal is set aside
// (CellResult.Disturbed) and taken again, once; then, while cells are
// still wide (results.MaxSpread), more rounds of those cells up to
// maxSamples samples each.
//
// Progress counts sample windows: every one measured, kept or set aside,
// is one done; the total is Repeat per cell, plus one per retake and per
// extra round, each added when it is decided; the windows a failed cell
// will not take are counted done when the configuration ends (finish). So
// done reaches total, and a run's total is the windows its cells took,
// with at least Repeat for each.
type schedule struct {
	repeat, maxSamples int
	// take measures the next sample of slot k (its taken-th window).
	take func(ctx context.Context, k int) (results.Sample, error)
	// progress is told of n windows done and more added to the total,
	// for slot k.
	progress func(k, done, more int)
	// measured is called after every sample kept, set aside or failed,
	// so that it can be saved at once; an error ends the run.
	measured func(k int) error
}

// run takes the samples of the slots; ctx's end or measured's error ends it
// (with that error), a sample's error fails its cell only.
func (s *schedule) run(ctx context.Context, slots []*slot) error {
	for _, sl := range slots {
		sl.owed = max(s.repeat, sl.taken)
	}
	for i := 0; i < s.repeat; i++ {
		for k := range slots {
			j := (k + i) % len(slots)
			if slots[j].failed() || len(slots[j].res.Samples) > i {
				continue // failed, or resumed with this sample
			}
			if err := s.sample(ctx, slots, j); err != nil {
				return err
			}
		}
	}
	for i := s.repeat; i < s.maxSamples; i++ {
		var more []int
		ahead := false // a resumed cell has this round's sample already
		for k, sl := range slots {
			if sl.failed() {
				continue
			}
			if len(sl.res.Samples) > i {
				ahead = true
				continue
			}
			if sl.res.Summarize(); sl.res.WideSpread {
				more = append(more, k)
			}
		}
		if len(more) == 0 && !ahead {
			break
		}
		for _, k := range more {
			slots[k].owed++
			s.progress(k, 0, 1)
		}
		for n := range more {
			if err := s.sample(ctx, slots, more[(n+i)%len(more)]); err != nil {
				return err
			}
		}
	}
	return nil
}

// sample takes slot k's next sample, and once more if the first was
// disturbed.
func (s *schedule) sample(ctx context.Context, slots []*slot, k int) error {
	sl := slots[k]
	for retake := false; ; retake = true {
		smp, err := s.take(ctx, k)
		sl.taken++
		s.progress(k, 1, 0)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			sl.res.Status, sl.res.Error = results.StatusFailed, err.Error()
			return s.measured(k)
		}
		if smp.Disturbed() && !retake {
			// The host's other tenants were measured too: set the sample
			// aside and take it again, once.
			sl.res.Disturbed = append(sl.res.Disturbed, smp)
			sl.owed++
			s.progress(k, 0, 1)
			if err := s.measured(k); err != nil {
				return err
			}
			continue
		}
		sl.res.Samples = append(sl.res.Samples, smp)
		return s.measured(k)
	}
}

// finish counts as done the windows slot k owes but did not take (a cell
// that failed, or could not run).
func (s *schedule) finish(k int, sl *slot) {
	if sl.taken < sl.owed {
		s.progress(k, sl.owed-sl.taken, 0)
		sl.taken = sl.owed
	}
}
