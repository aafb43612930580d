//go:build linux

package mode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"kquic.dev/bench/capture"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// A Mode measures the cells of one kind: bulk goodput, request/response,
// objects at once, connection setups, or the C tools of the native driver.
type Mode interface {
	// Name is the mode's name, as --mode and the results spell it (a
	// driver's Mode is registered under the driver's name instead).
	Name() matrix.Mode
	// Needs is what the mode needs of the run.
	Needs() Needs
	// Check says whether cell c can be measured here: "" when it can
	// (with a remark for the record, or ""), results.StatusNA when it
	// cannot whatever the machine has, results.StatusUnavailable when this
	// machine or the server lacks something; the note says why.
	Check(env *Env, c matrix.Cell) (status results.Status, note string)
	// Sample measures sample i of cell c, whose devices the runner has
	// prepared.
	Sample(ctx context.Context, env *Env, c matrix.Cell, i int) (results.Sample, error)
	// Summary is the run log's line for a cell measured to the end.
	Summary(r *results.CellResult) string
}

// Needs is what a mode needs of the run.
type Needs struct {
	// SingleHost, when not empty, says why the mode runs on the
	// single-host topology only (two-host mode refuses it with this).
	SingleHost string
}

// Env is what a run gives its modes: the spec, the two ends, and how to
// make a sample's probes.
type Env struct {
	Spec *matrix.Spec
	// Client and Server are the two ends (package bench/side).
	Client side.ClientSide
	Server side.ServerSide
	// Topology is the single-host topology, nil in two-host mode.
	Topology *topo.Topology
	// Probes makes the probes of sample i of cell c that the run asked
	// for (profile, capture, --explain counters), and the key log the
	// transports must write to for the capture (nil: none). Nil: none.
	Probes func(c matrix.Cell, i int) ([]Probe, *capture.KeyLog, error)
	// CaptureDir and Explain are what the run asked for, for a mode that
	// makes probes of its own (the native driver's tools are other
	// processes).
	CaptureDir string
	Explain    bool
	// Options are the run's options of its drivers, by name (what their
	// flags made, matrix.DriverSpec.Options: the native driver's tools);
	// see Option.
	Options map[matrix.Driver]any

	optMu sync.Mutex
}

// Option is the run's options of driver d; where the run has none, def
// makes them, and they are kept for the run (what the driver's runs teach
// it lasts the run).
func (e *Env) Option(d matrix.Driver, def func() any) any {
	e.optMu.Lock()
	defer e.optMu.Unlock()
	if o, ok := e.Options[d]; ok {
		return o
	}
	if e.Options == nil {
		e.Options = map[matrix.Driver]any{}
	}
	o := def()
	e.Options[d] = o
	return o
}

// Remote reports whether the run is two-host mode.
func (e *Env) Remote() bool { return e.Topology == nil }

// Local is the single-host topology's server end, and whether there is
// one (false in two-host mode).
func (e *Env) Local() (side.Local, bool) {
	l, ok := e.Server.(side.Local)
	return l, ok
}

// Prepare is how a sample of this process's transports starts: the cell's
// transport options (the spec's, writing the capture's key log) and the
// sample's probes.
func (e *Env) Prepare(c matrix.Cell, i int) (transport.Options, []Probe, error) {
	o := e.Spec.Options(c)
	if e.Probes == nil {
		return o, nil, nil
	}
	ps, kl, err := e.Probes(c, i)
	if err != nil {
		return o, nil, err
	}
	if kl != nil {
		o.KeyLog = kl
	}
	return o, ps, nil
}

// Start is Prepare with the cell's transport: how a sample of this
// process's transports starts.
func (e *Env) Start(c matrix.Cell, i int) (transport.Transport, transport.Options, []Probe, error) {
	tr, err := transport.Get(c.Transport)
	if err != nil {
		return nil, transport.Options{}, nil, err
	}
	o, probes, err := e.Prepare(c, i)
	return tr, o, probes, err
}

// Common is what the modes of this process's transports share, for them
// to embed: the name, Needs with SingleHost, and CheckTransport.
type Common struct {
	Mode       matrix.Mode
	SingleHost string // Needs().SingleHost
}

// Name is c.Mode.
func (c Common) Name() matrix.Mode { return c.Mode }

// Needs is SingleHost's.
func (c Common) Needs() Needs { return Needs{SingleHost: c.SingleHost} }

// Check is CheckTransport.
func (Common) Check(env *Env, cell matrix.Cell) (results.Status, string) {
	return CheckTransport(env, cell)
}

// CheckTransport is Check for the modes of this process's transports: the
// transport must run here and on the server, and take the cell's options
// (its note on GSO is the remark).
func CheckTransport(env *Env, c matrix.Cell) (results.Status, string) {
	tr, err := transport.Get(c.Transport)
	if err != nil {
		return results.StatusNA, err.Error()
	}
	if err := tr.Available(); err != nil {
		if errors.Is(err, transport.ErrNativeOnly) {
			return results.StatusNA, err.Error()
		}
		return results.StatusUnavailable, err.Error()
	}
	if env.Server != nil {
		if err := env.Server.Available(c.Transport); err != nil {
			return results.StatusUnavailable, "on the server: " + err.Error()
		}
	}
	ok, note := tr.Support(env.Spec.Options(c))
	if !ok {
		return results.StatusNA, strings.TrimPrefix(note, string(results.StatusNA)+": ")
	}
	return "", note
}

var (
	mu      sync.RWMutex
	modes   = map[matrix.Mode]Mode{}
	drivers = map[matrix.Driver]Mode{}
)

// Register adds the measuring of a mode, whose spec side is registered
// with package matrix (matrix.RegisterModeSpec, from a file of the mode's
// that builds on every platform). A second mode of one name panics: it is
// a program's error, found at start.
func Register(m Mode) {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := modes[m.Name()]; ok {
		panic(fmt.Sprintf("mode: %q registered twice", m.Name()))
	}
	modes[m.Name()] = m
}

// RegisterDriver adds the Mode that measures every cell of driver d,
// whatever the spec's mode (the native driver's C tools).
func RegisterDriver(d matrix.Driver, m Mode) {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := drivers[d]; ok {
		panic(fmt.Sprintf("mode: driver %q registered twice", d))
	}
	drivers[d] = m
}

// For is the Mode that measures cell c of a spec in mode name: the cell's
// driver's, if one is registered, else the mode's ("" is the default
// mode).
func For(name matrix.Mode, c matrix.Cell) (Mode, error) {
	mu.RLock()
	defer mu.RUnlock()
	if c.Driver != "" {
		if m, ok := drivers[c.Driver]; ok {
			return m, nil
		}
		return nil, fmt.Errorf("mode: no driver %q in this kqbench", c.Driver)
	}
	name = name.Named()
	if m, ok := modes[name]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("mode: no mode %q in this kqbench (it has %v)", name, names())
}

// Names lists the registered modes.
func Names() []matrix.Mode {
	mu.RLock()
	defer mu.RUnlock()
	return names()
}

func names() []matrix.Mode {
	var out []matrix.Mode
	for n := range modes {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// SummaryOf is a cell's line in the run's log: its figure, the number of
// samples its median is of and their spread, then detail, and a warning
// when the spread is wide.
func SummaryOf(figure string, samples int, spread float64, wide bool, detail string) string {
	s := fmt.Sprintf("%s (median of %d, spread %.0f%%)%s", figure, samples, spread*100, detail)
	if wide {
		s += " WIDE SPREAD"
	}
	return s
}

// GoodputSummary is SummaryOf a cell whose figure is its median goodput.
func GoodputSummary(r *results.CellResult) string {
	return SummaryOf(fmt.Sprintf("%.0f Mbit/s", r.MedianBps/1e6), len(r.Samples), r.Spread, r.WideSpread, "")
}
