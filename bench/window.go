//go:build linux

package bench

import (
	"context"
	"fmt"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
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

// A span is what a sample's measured window leaves, the parts every sample
// shares: this host's CPU at both edges, the server's snapshots (its
// bytes, its host's CPU and counters in two-host mode), the cycle counts,
// and the probes' figures.
type span struct {
	c0, c1  host.CPUSnapshot
	s0, s1  ServerSnapshot
	k0, k1  host.Counts
	cycErr  error
	counted map[string]float64
	missing []string
}

// snapshotter is the server's side of a window: a snapshot at each edge.
type snapshotter interface {
	Snapshot(ctx context.Context) (ServerSnapshot, error)
}

// measureWindow runs a sample's measured interval of dur, after its
// warm-up: the cycle counters opened, the probes started in order, the
// window's opening marked ahead for them (windowLead), then edge(true)
// and this host's CPU, the server's snapshot and the cycles read; dur
// less the lead later the same at the closing (edge(false)); and the
// probes stopped in reverse. name names the transport in errors.
func measureWindow(ctx context.Context, name string, probes []Probe, ss snapshotter, dur time.Duration, edge func(open bool)) (sp span, err error) {
	cyc, cycErr := host.OpenCycles()
	if cyc != nil {
		defer cyc.Close()
	}
	pw := &probeWindow{probes: probes}
	defer pw.stop() // on an early return
	pw.start(ctx)
	read := func(open bool, c *host.CPUSnapshot, s *ServerSnapshot, k *host.Counts) error {
		if _, err := pw.markAhead(ctx, open); err != nil {
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
	if err := read(true, &sp.c0, &sp.s0, &sp.k0); err != nil {
		return sp, err
	}
	if err := sleepCtx(ctx, dur-windowLead); err != nil {
		return sp, err
	}
	if err := read(false, &sp.c1, &sp.s1, &sp.k1); err != nil {
		return sp, err
	}
	sp.cycErr = cycErr
	sp.counted, sp.missing = pw.stop()
	sp.missing = append(sp.missing, sp.s0.CountersMissing...)
	sp.missing = append(sp.missing, sp.s1.CountersMissing...)
	for k, v := range sp.s1.Counters {
		if sp.counted == nil {
			sp.counted = map[string]float64{}
		}
		sp.counted[k] = v
	}
	return sp, nil
}

// fill sets what the span gives a sample of bytes: CPU (or why there is
// none), cycles per byte (or why not), the counters, the pinned ends'
// CPUs (aff; the server's where it is local) and the server host's CPU.
func (sp *span) fill(smp *results.Sample, bytes int64, aff *matrix.Affinity, localServer bool) {
	smp.CPU, smp.CPUUnavailable = host.CPUOf(sp.c0, sp.c1)
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
	host.AddServerCPU(smp, sp.s0.CPU, sp.s1.CPU)
}

// pinned is one pinned CPU's time and cycles over the span.
func (sp *span) pinned(cpu int, bytes int64) results.PinnedCPU {
	p := host.PinnedBetween(sp.c0, sp.c1, cpu)
	if sp.cycErr == nil {
		p.CyclesPerByte, p.InstructionsPerByte = sp.k0.PerByte(sp.k1, cpu, bytes)
	}
	return p
}
