//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"kquic.dev/bench/capture"
	"kquic.dev/bench/counters"
	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
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
	Client ClientSide
	Server ServerSide
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

	prof *Profiler
	// Native says where the C tools of Spec.Drivers "native" are.
	Native NativeTools
}

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
// take. Every probe gets the same two instants, a little ahead (windowLead)
// so that each has time to set them before they come; the byte counts are
// read at them.
type Windowed interface {
	Begin(at time.Time)
	End(at time.Time)
}

// windowLead is how far ahead of time a window's instants are given to the
// probes (matrix.WindowLead).
const windowLead = matrix.WindowLead

// probeEnd is a ClientSide that can host probes: a device in a namespace.
type probeEnd interface {
	Name() string
	Do(fn func() error) error
}

// SameNetns reports whether do runs functions in this thread's network
// namespace (then counting both would count the same syscalls twice). An
// error says which check failed: neither answer is known then.
func SameNetns(do func(fn func() error) error) (bool, error) {
	ino := func() (uint64, error) {
		var st syscall.Stat_t
		if err := syscall.Stat("/proc/thread-self/ns/net", &st); err != nil {
			return 0, fmt.Errorf("network namespace: %w", err)
		}
		return st.Ino, nil
	}
	var inside uint64
	if err := do(func() (err error) { inside, err = ino(); return err }); err != nil {
		return false, fmt.Errorf("network namespace of the device's end: %w", err)
	}
	here, err := ino()
	if err != nil {
		return false, err
	}
	return inside == here, nil
}

// probes makes the probes of one sample, and says which key log the
// transports must write to.
func (r *Runner) probes(c matrix.Cell, sample int, client ClientSide, server ServerSide) ([]Probe, *capture.KeyLog, error) {
	var ps []Probe
	if r.prof != nil { // system-wide: not bound to a namespace
		ps = append(ps, r.prof.probe(c))
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
		same, err := SameNetns(ce.Do)
		if err != nil {
			return nil, nil, fmt.Errorf("explain: %w", err)
		}
		if !same {
			ends = append(ends, counters.End{Name: "process", Ifname: "lo"})
		}
		if ls, ok := server.(localServer); ok {
			sd := ls.t.ServerDevice()
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
	tr   transport.Transport
	opts transport.Options
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

// sample measures the i-th sample window of a cell with the mode's
// measurement and the run's probes.
func (r *Runner) sample(ctx context.Context, client ClientSide, server ServerSide, m *cellRun, i int) (results.Sample, error) {
	probes, kl, err := r.probes(m.c, i, client, server)
	if err != nil {
		return results.Sample{}, err
	}
	o := m.opts
	if kl != nil {
		o.KeyLog = kl
	}
	switch {
	case m.c.Driver == matrix.DriverNative:
		return r.measureNative(ctx, server.(localServer).t, m.c, i)
	case m.c.Mode == matrix.ModeRR:
		return measureRR(ctx, client, server, m.tr, m.c, o, r.Spec.Warmup, r.Spec.Time, probes)
	case r.Spec.Mode == matrix.ModeHandshake:
		return measureHandshakes(ctx, client, server, m.c, o, r.Spec.Warmup, r.Spec.Time, probes)
	case r.Spec.Mode == matrix.ModeStreams:
		return streamsSample(ctx, server, m.tr, m.c, o, probes)
	}
	return measure(ctx, client, server, m.tr, m.c, o, r.Spec.Affinity, r.Spec.Warmup, r.Spec.Time, probes)
}

// sameDevices reports whether two cells run with one device configuration.
func sameDevices(a, b matrix.Cell) bool {
	return a.MTU == b.MTU && a.GSO == b.GSO
}

// notApplicable reports whether the cell's options do not apply to its
// transport (plain TCP with encryption, quic-go without).
func notApplicable(c matrix.Cell) bool {
	if c.Driver == matrix.DriverNative {
		return nativeNotApplicable(c) != ""
	}
	tr, err := transport.Get(c.Transport)
	if err != nil {
		return false
	}
	ok, _ := tr.Support(c.Options())
	return !ok
}

func summaryLine(r *results.CellResult) string {
	switch {
	case r.Status == results.StatusOK && r.RR != nil:
		return rrSummaryLine(r)
	}
	switch r.Status {
	case results.StatusOK:
		if r.Handshake != nil {
			return handshakeSummaryLine(r)
		}
		s := fmt.Sprintf("%.0f Mbit/s (median of %d, spread %.0f%%)", r.MedianBps/1e6, len(r.Samples), r.Spread*100)
		if r.WideSpread {
			s += " WIDE SPREAD"
		}
		return s
	case results.StatusFailed:
		return "failed: " + r.Error
	}
	return string(r.Status) + ": " + r.Note
}

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

// runSample measures one repeat of a cell on the single-host topology.
func runSample(ctx context.Context, t *topo.Topology, tr transport.Transport, c matrix.Cell, o transport.Options, warmup, dur time.Duration) (results.Sample, error) {
	return measure(ctx, t.ClientDevice(), localServer{t, -1}, tr, c, o, nil, warmup, dur, nil)
}

// measure measures one repeat of a cell between the two sides: the server
// listens, the client dials and opens the streams, and after the warmup the
// receiver's byte count and both hosts' CPU are read at the start and the
// end of the window.
func measure(ctx context.Context, client ClientSide, server ServerSide, tr transport.Transport, c matrix.Cell, o transport.Options, aff *matrix.Affinity, warmup, dur time.Duration, probes []Probe) (_ results.Sample, rerr error) {
	ctx, cancel := context.WithTimeout(ctx, warmup+dur+60*time.Second)
	defer cancel()
	ss, err := server.Listen(ctx, tr.Name(), o, c.Size)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s server: %w", tr.Name(), err)
	}
	p := newStreams(c.Size)
	p.cpu = aff.ClientCPU()
	var d transport.Dialer
	var stopOnce sync.Once
	var stopErr error
	shutdown := func() {
		if d != nil {
			p.closeStreams(d)
		} else {
			p.closeStreams()
		}
		stopOnce.Do(func() {
			sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
			defer scancel()
			stopErr = ss.Stop(sctx)
		})
	}
	defer func() {
		shutdown()
		err := p.wait(tr.Name())
		if rerr == nil {
			rerr = errors.Join(err, stopErr)
		}
	}()
	co := o
	co.PeerCert = server.Certificate()
	if err := client.Do(func() (err error) {
		d, err = tr.Dial(ctx, ss.Addr(), co)
		return err
	}); err != nil {
		return results.Sample{}, fmt.Errorf("%s client: %w", tr.Name(), err)
	}

	mark := byte(markUp)
	if c.Direction == "down" {
		mark = markDown
	}
	for i := 0; i < c.Streams; i++ {
		var s io.ReadWriteCloser
		if err := client.Do(func() (err error) {
			s, err = d.Open(ctx)
			return err
		}); err != nil {
			return results.Sample{}, fmt.Errorf("%s: open stream %d: %w", tr.Name(), i, err)
		}
		p.add(s)
		if _, err := s.Write([]byte{mark}); err != nil {
			return results.Sample{}, fmt.Errorf("%s: stream %d: %w", tr.Name(), i, err)
		}
		p.wg.Add(1)
		go p.pump(s, mark == markUp)
	}

	if err := sleepCtx(ctx, warmup); err != nil {
		return results.Sample{}, err
	}
	var b0, b1 int64 // the bytes this end received, at the edges
	sp, err := measureWindow(ctx, tr.Name(), probes, ss, dur, func(open bool) {
		if open {
			b0 = p.received.Load()
		} else {
			b1 = p.received.Load()
		}
	})
	if err != nil {
		return results.Sample{}, err
	}
	c0, c1, s0, s1 := sp.c0, sp.c1, sp.s0, sp.s1
	shutdown()
	secs := c1.At.Sub(c0.At).Seconds()
	bytes := b1 - b0
	if mark == markUp {
		bytes = s1.Received - s0.Received
		if s0.CPU != nil && s1.CPU != nil { // the receiver's clock
			secs = s1.CPU.At.Sub(s0.CPU.At).Seconds()
		}
	}
	if bytes == 0 {
		return results.Sample{}, fmt.Errorf("%s: no data arrived in %v", tr.Name(), dur)
	}
	smp := results.Sample{
		Bytes: bytes, Seconds: secs, Bps: float64(bytes) * 8 / secs,
		Streams: c.Streams, Warmup: warmup.Seconds(), Finished: time.Now().UTC(),
	}
	_, local := server.(localServer)
	sp.fill(&smp, bytes, aff, local)
	return smp, nil
}
