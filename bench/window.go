//go:build linux

package bench

import (
	"context"
	"time"
)

// probeWindow runs a sample's probes over its window: started in order,
// told the window's two instants (Windowed), stopped in reverse, so that
// each probe's window holds those of the probes after it.
type probeWindow struct {
	probes  []Probe
	started []Probe
	missing []string // the probes that did not start or count, with why
}

// start starts the probes; one that fails is recorded as missing.
func (w *probeWindow) start(ctx context.Context) {
	for _, p := range w.probes {
		if err := p.Start(ctx); err != nil {
			w.missing = append(w.missing, err.Error())
			continue
		}
		w.started = append(w.started, p)
	}
}

// mark gives every windowed probe the instant at as the window's opening
// (open) or closing.
func (w *probeWindow) mark(at time.Time, open bool) {
	for _, p := range w.started {
		if wp, ok := p.(Windowed); ok {
			if open {
				wp.Begin(at)
			} else {
				wp.End(at)
			}
		}
	}
}

// markAhead gives every windowed probe the instant windowLead from now as
// the window's opening (open) or closing, and waits for it.
func (w *probeWindow) markAhead(ctx context.Context, open bool) (time.Time, error) {
	at := time.Now().Add(windowLead)
	w.mark(at, open)
	return at, sleepCtx(ctx, time.Until(at))
}

// open starts probes and opens their window (if any started), for a
// sample whose window is not a fixed time (streams mode's transfer).
func (w *probeWindow) open(ctx context.Context, probes []Probe) error {
	w.probes = probes
	w.start(ctx)
	if len(w.started) == 0 {
		return nil
	}
	_, err := w.markAhead(ctx, true)
	return err
}

// close closes the window open opened and stops the probes.
func (w *probeWindow) close(ctx context.Context) (map[string]float64, []string, error) {
	if len(w.started) > 0 {
		if _, err := w.markAhead(ctx, false); err != nil {
			return nil, nil, err
		}
	}
	counted, missing := w.stop()
	return counted, missing, nil
}

// stop stops the probes that run and returns what they counted, with what
// they could not (stopping again returns the same missing list and no
// values).
func (w *probeWindow) stop() (map[string]float64, []string) {
	var counted map[string]float64
	for i := len(w.started) - 1; i >= 0; i-- {
		vals, missing, err := w.started[i].Stop()
		if err != nil {
			w.missing = append(w.missing, err.Error())
		}
		w.missing = append(w.missing, missing...)
		for k, v := range vals {
			if counted == nil {
				counted = map[string]float64{}
			}
			counted[k] = v
		}
	}
	w.started = nil
	return counted, w.missing
}
