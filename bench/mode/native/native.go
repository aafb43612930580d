//go:build linux

package native

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"kquic.dev/bench/capture"
	"kquic.dev/bench/counters"
	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/mode/bulk/conns"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
)

func init() { mode.RegisterDriver(Name, Mode{mode.Common{Mode: "bulk"}}) }

// Mode is the native driver, registered for Name: it
// measures goodput, as bulk mode does. It runs the tools between the
// single-host topology's namespaces; in two-host mode Check says so per
// cell.
type Mode struct{ mode.Common }

// Check says why a native cell cannot run here: the tool cannot measure
// its options (n/a), the tool is not given or missing (n/a, with how to
// get it), or two-host mode (unavailable).
func (Mode) Check(env *mode.Env, c matrix.Cell) (results.Status, string) {
	tl, why := toolFor(toolsOf(env), c.Transport)
	if tl != nil {
		why = tl.notApplicable(c)
	}
	if _, ok := tl.(iperf); why == "" && c.Send != "" && !ok {
		why = c.Send + ": the tool sends its own way (--send is the Go end's, and iperf3 -Z's)"
	}
	if why != "" {
		return results.StatusNA, "native: " + why
	}
	if env.Remote() {
		return results.StatusUnavailable, "native: the native driver runs the C tools on the single-host topology only (drop --peer)"
	}
	return tl.missing()
}

// Sample measures one sample of the cell with its tool.
func (Mode) Sample(ctx context.Context, env *mode.Env, c matrix.Cell, i int) (results.Sample, error) {
	if env.Remote() {
		return results.Sample{}, errors.New("native: the native driver runs on the single-host topology only")
	}
	return measure(ctx, env, c, i)
}

// Summary is the goodput's median, the samples and the spread.
func (Mode) Summary(r *results.CellResult) string { return mode.GoodputSummary(r) }

// measure measures one sample of a native cell on the run's topology,
// whose devices the runner has prepared for the cell.
func measure(ctx context.Context, env *mode.Env, c matrix.Cell, sample int) (results.Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, env.Spec.Warmup+env.Spec.Time+2*time.Minute)
	defer cancel()
	tl, why := toolFor(toolsOf(env), c.Transport)
	if tl == nil {
		return results.Sample{}, fmt.Errorf("native: %s", why)
	}
	t := env.Topology
	w := &window{Window: mode.NewWindow(probes(env, t, c, sample))}
	return tl.measure(ctx, env, t, c, w)
}

// probes are the probes of a native sample: the capture (no key
// log: the tools keep their keys) and the --explain counters of the devices'
// packets and drops at both ends. The tools are other processes, so their
// syscalls are not counted.
func probes(env *mode.Env, t *topo.Topology, c matrix.Cell, sample int) []mode.Probe {
	var ps []mode.Probe
	cd, sd := t.ClientDevice(), t.ServerDevice()
	if env.CaptureDir != "" {
		name := strings.NewReplacer("/", "_", "=", "-").Replace(c.Key()) + fmt.Sprintf("_%d", sample)
		ps = append(ps, &capture.Probe{Opts: capture.Options{Ifname: cd.Name(), Do: cd.Do, Dir: env.CaptureDir, Cell: name}})
	}
	if env.Explain {
		ps = append(ps, counters.NewProbe(counters.Options{Ends: []counters.End{
			{Name: "client", Ifname: cd.Name(), Do: cd.Do},
			{Name: "server", Ifname: sd.Name(), Do: sd.Do},
		}}))
	}
	return ps
}

// window is a native sample's probes over its window (mode.Window, as the
// other modes run them) and the CPU at the window's two ends.
type window struct {
	*mode.Window
	c0, c1 host.CPUSnapshot
}

// conns adds the figures of a cell of several connections (bench/mode/
// bulk/conns) to a sample of f: each connection's bytes, the tool's
// streams taken c.Streams at a time, all of them on the CPUs the tool's
// two processes were pinned to (aff's first pair), and every CPU's time.
func (w *window) conns(smp *results.Sample, c matrix.Cell, f ToolFigure, aff *matrix.Affinity) error {
	n := max(c.Conns, 1)
	if len(f.Streams) != n*c.Streams {
		return fmt.Errorf("%d streams in the tool's result, want %d connections of %d", len(f.Streams), n, c.Streams)
	}
	per := make([]int64, n)
	var total int64
	for i, b := range f.Streams {
		per[i/c.Streams] += b
		total += b
	}
	if total != f.Bytes {
		return fmt.Errorf("the tool's streams add up to %d bytes, its sum to %d", total, f.Bytes)
	}
	var pairs [][2]int
	if aff != nil {
		for range n {
			pairs = append(pairs, [2]int{aff.Client, aff.Server})
		}
	}
	smp.Payload = conns.Figures(per, f.Seconds, pairs, host.CoresBetween(w.c0, w.c1), nil, smp.CPU.BusyCores, smp.Bps)
	return nil
}

// sample makes the Sample of a tool's figure, with the CPU over the
// window and the counters.
func (w *window) sample(f ToolFigure, aff *matrix.Affinity, warmup float64) results.Sample {
	counted, missing := w.Stop()
	cpu, cpuNote := host.CPUOf(w.c0, w.c1)
	smp := results.Sample{
		Bytes: f.Bytes, Seconds: f.Seconds, Bps: float64(f.Bytes) * 8 / f.Seconds, CPU: cpu, CPUUnavailable: cpuNote,
		Streams: 1, Warmup: warmup, Finished: time.Now().UTC(),
		CyclesUnavailable: "native driver: cycles are not counted",
		Counters:          counted, CountersMissing: missing,
	}
	if counted != nil {
		smp.CountersMissing = slices.DeleteFunc(smp.CountersMissing, func(m string) bool { return strings.HasPrefix(m, "syscalls:") })
		smp.CountersMissing = append(smp.CountersMissing, "syscalls: not counted for the native driver's cells: the tools are other processes")
	}
	if aff != nil {
		sv := host.PinnedBetween(w.c0, w.c1, aff.Server)
		smp.Ends = &results.EndsCPU{Client: host.PinnedBetween(w.c0, w.c1, aff.Client), Server: &sv}
	}
	return smp
}
