//go:build linux

package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"kquic.dev/bench/capture"
	"kquic.dev/bench/counters"
	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/profile"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/transport"
)

// Runner runs a matrix: on this host between two network namespaces that it
// creates (the default), or between this host and a peer when Client and
// Server are set.
type Runner struct {
	// Label names the run in its document (Document.Label).
	Label string
	Spec  matrix.Spec
	// Out is the results file ("" for none), written atomically after every
	// sample: an interrupted run loses at most the sample it was taking,
	// and resumes (Resume) with the cells it had not finished.
	Out string
	// Resume continues the run recorded in Out: cells already measured are
	// kept, failed ones run again, and a cell interrupted while it was
	// measured keeps its samples and takes the rest. Without it an
	// existing Out is an error.
	Resume bool
	// Command is recorded in the document.
	Command []string
	// Progress is called after every sample window and every cell not
	// measured, with the windows done and the total so far: Repeat per
	// cell that can run, one more per disturbed sample taken again and per
	// extra round (see schedule). done reaches total when the run ends.
	Progress func(done, total int, c matrix.Cell)
	// Log receives one line per cell (default: discarded).
	Log io.Writer

	// Client and Server, both set, are the two ends of two-host mode: this
	// host's device and a kqbench server on the peer (package bench/remote).
	// Both nil: the single-host topology.
	Client side.ClientSide
	Server side.ServerSide
	// Topology and NICDriver describe the two-host setup for the document,
	// and Peer is the server host's environment.
	Topology, NICDriver string
	Peer                *results.Environment
	// NIC records this host's device in two-host mode (host.ReadNIC).
	NIC *results.NIC

	// Explain attaches the eBPF and kernel counters (package
	// bench/counters) to every sample: packets, syscalls and drops per MB.
	Explain bool
	// CaptureDir, if set, writes a pcapng of every sample there, with the
	// TLS key log embedded so that Wireshark decrypts it.
	CaptureDir string
	// ProfileDir, if set, records call graphs of the whole machine with
	// perf over every sample's window and writes each cell's, merged over
	// its samples, there as folded stacks (see Profiler).
	ProfileDir string
	// ProfileFrequency is perf's samples per second and CPU (0: 999).
	ProfileFrequency int

	// DriverOptions are the options of Spec.Drivers, by name (what their
	// flags made, matrix.DriverSpec.Options: where the native driver's C
	// tools are).
	DriverOptions map[matrix.Driver]any

	prof *profile.Profiler
}

// probeEnd is a ClientSide that can host probes: a device in a namespace.
type probeEnd interface {
	Name() string
	Do(fn func() error) error
}

// probes makes the probes of one sample, and says which key log the
// transports must write to.
func (r *Runner) probes(c matrix.Cell, sample int, client side.ClientSide, server side.ServerSide) ([]mode.Probe, *capture.KeyLog, error) {
	var ps []mode.Probe
	if r.prof != nil { // system-wide: not bound to a namespace
		ps = append(ps, r.prof.Probe(c))
	}
	ce, ok := client.(probeEnd)
	if !ok {
		return ps, nil, nil
	}
	// The capture starts first and stops last: its window holds the
	// counters' one, so it sees every packet they count (its socket is
	// slow to open under emulation, and a 300 ms window is short).
	var kl *capture.KeyLog
	if r.CaptureDir != "" {
		kl = capture.NewKeyLog()
		name := strings.NewReplacer("/", "_", "=", "-").Replace(c.Key()) + fmt.Sprintf("_%d", sample)
		ps = append(ps, &capture.Probe{Opts: capture.Options{Ifname: ce.Name(), Do: ce.Do, Dir: r.CaptureDir, Cell: name, KeyLog: kl}})
	}
	if r.Explain {
		// Syscalls count by the calling thread's namespace: the goroutines
		// that move the data run on threads of the process's own one
		// ("process"), whatever namespace their sockets live in.
		ends := []counters.End{{Name: "client", Ifname: ce.Name(), Do: ce.Do}}
		same, err := side.SameNetns(ce.Do)
		if err != nil {
			return nil, nil, fmt.Errorf("explain: %w", err)
		}
		if !same {
			ends = append(ends, counters.End{Name: "process", Ifname: "lo"})
		}
		if ls, ok := server.(side.Local); ok {
			sd := ls.T.ServerDevice()
			ends = append(ends, counters.End{Name: "server", Ifname: sd.Name(), Do: sd.Do})
		}
		ps = append(ps, counters.NewProbe(counters.Options{Ends: ends, PID: os.Getpid()}))
	}
	return ps, kl, nil
}

// A cellRun is one cell of the run's current device configuration.
type cellRun struct {
	c    matrix.Cell
	res  results.CellResult
	mode mode.Mode
	// run: the cell can be measured here; scheduled: its samples were
	// taken (slot) in this configuration's rounds.
	run, scheduled bool
	slot           slot
}

// resumable reports whether a cell of the document being resumed was
// interrupted while it was measured: fewer samples than Repeat, or still
// wide with fewer than MaxSamples.
func (r *Runner) resumable(prev *results.CellResult) bool {
	if prev.Status != results.StatusOK {
		return false
	}
	n := len(prev.Samples)
	return n < r.Spec.Repeat || (prev.WideSpread && n < r.Spec.MaxSamples())
}

// sameDevices reports whether two cells run with one device configuration.
func sameDevices(a, b matrix.Cell) bool {
	return a.MTU == b.MTU && a.GSO == b.GSO
}

// summaryLine is a cell's line in the run's log.
func summaryLine(m mode.Mode, r *results.CellResult) string {
	switch r.Status {
	case results.StatusOK:
		return m.Summary(r)
	case results.StatusFailed:
		return "failed: " + r.Error
	}
	return string(r.Status) + ": " + r.Note
}

// ErrExists is returned when the output file exists and resuming was not
// asked for: measured results are never overwritten.
var ErrExists = errors.New("the results file exists")

// document is the run's results document: the file being resumed, or a
// new one.
func (r *Runner) document() (*results.Document, error) {
	if r.Out != "" {
		if _, err := os.Stat(r.Out); err == nil {
			if !r.Resume {
				return nil, fmt.Errorf("matrix: %s: %w; pass --resume to continue it, or choose another --out", r.Out, ErrExists)
			}
			d, err := results.Load(r.Out)
			if err != nil {
				return nil, fmt.Errorf("matrix: resume: %w", err)
			}
			d.Spec = r.Spec
			d.Complete = false
			return d, nil
		}
	}
	return &results.Document{Schema: results.SchemaVersion, Label: r.Label, Started: time.Now().UTC(), Command: r.Command, Env: RunEnvironment(), Spec: r.Spec}, nil
}

// RunEnvironment is host.CurrentEnvironment with the transports that can run
// here, as a results document records it (and a kqbench server reports).
func RunEnvironment() results.Environment {
	e := host.CurrentEnvironment()
	e.Transports = map[string]string{}
	for _, n := range transport.Names() {
		t, _ := transport.Get(n)
		if err := t.Available(); err != nil {
			e.Transports[n] = "unavailable: " + err.Error()
		} else {
			e.Transports[n] = "available"
		}
	}
	return e
}
