//go:build linux

package mode

import (
	"context"
	"fmt"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
)

// Probe measures something over a sample's window (package bench/counters
// and bench/capture have them). A sample starts its probes in order and
// stops them in reverse, so each probe's window holds the windows of the
// probes after it: the first probe sees at least what the last one counts.
type Probe interface {
	Start(ctx context.Context) error
	Stop() (values map[string]float64, missing []string, err error)
}

// A Windowed probe is told when the sample's window opens and closes, and
// counts only what happens in between, however long its Start and Stop
// take. Every probe gets the same two instants, a little ahead
// (WindowLead) so that each has time to set them before they come; the
// byte counts are read at them.
type Windowed interface {
	Begin(at time.Time)
	End(at time.Time)
}

// WindowLead is how far ahead of time a window's instants are given to the
// probes (matrix.WindowLead).
const WindowLead = matrix.WindowLead

// Sleep waits for d or for ctx's end, whichever comes first, and returns
// ctx's error in the second case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Window runs a sample's probes over its window: started in order, told
// the window's two instants (Windowed), stopped in reverse, so that each
// probe's window holds those of the probes after it.
type Window struct {
	probes  []Probe
	started []Probe
	missing []string // the probes that did not start or count, with why
}

// NewWindow is the window of a sample's probes.
func NewWindow(probes []Probe) *Window { return &Window{probes: probes} }

// Start starts the probes; one that fails is recorded as missing.
func (w *Window) Start(ctx context.Context) {
	for _, p := range w.probes {
		if err := p.Start(ctx); err != nil {
			w.missing = append(w.missing, err.Error())
			continue
		}
		w.started = append(w.started, p)
	}
}

// Mark gives every windowed probe the instant at as the window's opening
// (open) or closing.
func (w *Window) Mark(at time.Time, open bool) {
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

// MarkAhead gives every windowed probe the instant WindowLead from now as
// the window's opening (open) or closing, and waits for it.
func (w *Window) MarkAhead(ctx context.Context, open bool) (time.Time, error) {
	at := time.Now().Add(WindowLead)
	w.Mark(at, open)
	return at, Sleep(ctx, time.Until(at))
}

// Open starts the probes and opens their window (if any started), for a
// sample whose window is not a fixed time (streams mode's transfer).
func (w *Window) Open(ctx context.Context) error {
	w.Start(ctx)
	if len(w.started) == 0 {
		return nil
	}
	_, err := w.MarkAhead(ctx, true)
	return err
}

// Close closes the window Open opened and stops the probes.
func (w *Window) Close(ctx context.Context) (map[string]float64, []string, error) {
	if len(w.started) > 0 {
		if _, err := w.MarkAhead(ctx, false); err != nil {
			return nil, nil, err
		}
	}
	counted, missing := w.Stop()
	return counted, missing, nil
}

// Stop stops the probes that run and returns what they counted, with what
// they could not (stopping again returns the same missing list and no
// values).
func (w *Window) Stop() (map[string]float64, []string) {
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

// Reset stops the probes and forgets what they could not count, for a
// measurement taken again with the same probes (the native driver's run
// that was too short).
func (w *Window) Reset() {
	w.Stop()
	w.missing = nil
}

// A Span is what a sample's measured window leaves, the parts every sample
// shares: this host's CPU at both edges (C0, C1), the server's snapshots
// (S0, S1: its bytes, its host's CPU and counters in two-host mode), the
// cycle counts, and the probes' figures.
type Span struct {
	C0, C1  host.CPUSnapshot
	S0, S1  side.ServerSnapshot
	k0, k1  host.Counts
	cycErr  error
	counted map[string]float64
	missing []string
}

// Seconds is the window's length by this host's clock.
func (sp *Span) Seconds() float64 { return sp.C1.At.Sub(sp.C0.At).Seconds() }

// Snapshotter is the server's side of a window: a snapshot at each edge
// (a side.ServerSample is one).
type Snapshotter interface {
	Snapshot(ctx context.Context) (side.ServerSnapshot, error)
}

// MeasureWindow runs a sample's measured interval of dur, after its
// warm-up: the cycle counters opened, the probes started in order, the
// window's opening marked ahead for them (WindowLead), then edge(true)
// and this host's CPU, the server's snapshot and the cycles read; dur
// less the lead later the same at the closing (edge(false)); and the
// probes stopped in reverse. name names the transport in errors.
func MeasureWindow(ctx context.Context, name string, probes []Probe, ss Snapshotter, dur time.Duration, edge func(open bool)) (sp Span, err error) {
	cyc, cycErr := host.OpenCycles()
	if cyc != nil {
		defer cyc.Close()
	}
	pw := NewWindow(probes)
	defer pw.Stop() // on an early return
	pw.Start(ctx)
	read := func(open bool, c *host.CPUSnapshot, s *side.ServerSnapshot, k *host.Counts) error {
		if _, err := pw.MarkAhead(ctx, open); err != nil {
			return err
		}
		edge(open)
		*c = host.SnapshotCPU()
		if *s, err = ss.Snapshot(ctx); err != nil {
			return fmt.Errorf("%s server: %w", name, err)
		}
		if cyc != nil && cycErr == nil {
			*k, cycErr = cyc.Read()
		}
		return nil
	}
	if err := read(true, &sp.C0, &sp.S0, &sp.k0); err != nil {
		return sp, err
	}
	if err := Sleep(ctx, dur-WindowLead); err != nil {
		return sp, err
	}
	if err := read(false, &sp.C1, &sp.S1, &sp.k1); err != nil {
		return sp, err
	}
	sp.cycErr = cycErr
	sp.counted, sp.missing = pw.Stop()
	sp.missing = append(sp.missing, sp.S0.CountersMissing...)
	sp.missing = append(sp.missing, sp.S1.CountersMissing...)
	for k, v := range sp.S1.Counters {
		if sp.counted == nil {
			sp.counted = map[string]float64{}
		}
		sp.counted[k] = v
	}
	return sp, nil
}

// Fill sets what the span gives a sample of bytes: CPU (or why there is
// none), cycles per byte (or why not), the counters, the pinned ends'
// CPUs (aff; the server's where it is local) and the server host's CPU.
func (sp *Span) Fill(smp *results.Sample, bytes int64, aff *matrix.Affinity, localServer bool) {
	smp.CPU, smp.CPUUnavailable = host.CPUOf(sp.C0, sp.C1)
	if sp.cycErr == nil {
		smp.CPU.CyclesPerByte, smp.CPU.InstructionsPerByte = sp.k0.PerByte(sp.k1, -1, bytes)
	} else {
		smp.CyclesUnavailable = sp.cycErr.Error()
	}
	smp.Counters, smp.CountersMissing = sp.counted, sp.missing
	if aff != nil {
		smp.Ends = &results.EndsCPU{Client: sp.pinned(aff.Client, bytes)}
		if localServer {
			sv := sp.pinned(aff.Server, bytes)
			smp.Ends.Server = &sv
		}
	}
	host.AddServerCPU(smp, sp.S0.CPU, sp.S1.CPU)
}

// pinned is one pinned CPU's time and cycles over the span.
func (sp *Span) pinned(cpu int, bytes int64) results.PinnedCPU {
	p := host.PinnedBetween(sp.C0, sp.C1, cpu)
	if sp.cycErr == nil {
		p.CyclesPerByte, p.InstructionsPerByte = sp.k0.PerByte(sp.k1, cpu, bytes)
	}
	return p
}
