package fuzz

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"kquic.dev/conformance"
	"kquic.dev/internal/quicpeer"
	"kquic.dev/internal/quicwire"
	"kquic.dev/kmod/kcov"
)

// Watcher is an oracle that looks at the system: the kernel log.
type Watcher interface {
	// Check returns what went wrong since the last call (kernel log
	// lines), nil for nothing.
	Check() []string
}

// LeakCheck is an oracle that compares the system's state before a run and
// after every connection has closed.
type LeakCheck interface {
	// Baseline records the state before the run.
	Baseline() error
	// Settled waits until the state is back to the baseline, or returns
	// what stayed when ctx ends.
	Settled(ctx context.Context) error
}

// Options configure a run.
type Options struct {
	Target conformance.Target
	// Roles the target is fuzzed in, a batch each in turn (default:
	// server only).
	Roles []conformance.Role
	// Gen makes the inputs; Replay, if set, is sent instead.
	Gen    Generator
	Replay []Input
	// Inputs and Time bound the run (0: no bound; one of them must be set
	// unless Replay is).
	Inputs int
	Time   time.Duration
	// Batch is the number of inputs between liveness checks (default 50).
	Batch int
	// Log, if set, gets every input before it is sent.
	Log *Log
	// Kernel watches the kernel log; Leaks checks for leaks at the end.
	Kernel Watcher
	Leaks  LeakCheck
	// Progress, if set, gets a line every ProgressEvery (default 10s).
	Progress      io.Writer
	ProgressEvery time.Duration
	// Inject is called before each input is sent (tests of the oracles).
	Inject func(seq int)
	// Mark, if set, names what input MarkAt does before it is sent, for
	// tests of the oracles: "kmsg" writes a WARNING: line to the kernel
	// log, "crash" crashes the kernel (see [Act]). The mark is part of
	// the input: it is logged with it and a replay acts on it again, as
	// an input that trips a bug trips it again.
	Mark   string
	MarkAt int
	// Cover, if set, collects coverage (a KCOV tracer): every CoverEvery
	// inputs (default 10) and at the end.
	Cover      Collector
	CoverEvery int
}

// Collector collects coverage as a run goes, before buffers fill.
type Collector interface{ Collect() }

// Finding is something an oracle saw.
type Finding struct {
	// Oracle is "kernel-log", "liveness", "leak" or "guest".
	Oracle string   `json:"oracle"`
	Detail string   `json:"detail"`
	Lines  []string `json:"lines,omitempty"`
	// After is the last input sent before it was seen; Window the inputs
	// around it (the last ones sent).
	After  int     `json:"after"`
	Window []Input `json:"window,omitempty"`
	// Reproducer is the directory [WriteReproducer] wrote for it.
	Reproducer string `json:"reproducer,omitempty"`
}

// Schema names the results file's format.
const Schema = "kqbench.fuzz/v1"

// Report is a run's outcome.
type Report struct {
	Schema  string    `json:"schema"`
	Target  string    `json:"target"`
	Seed    uint64    `json:"seed"`
	Module  string    `json:"module,omitempty"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	// Inputs sent: in all, after a handshake (1-RTT) and before (Initial).
	Inputs        int `json:"inputs"`
	PostHandshake int `json:"post_handshake"`
	PreHandshake  int `json:"pre_handshake"`
	// Connections made for inputs, and how many of them the target
	// closed on an input.
	Connections int `json:"connections"`
	Closed      int `json:"closed"`
	// Answers counts the target's CONNECTION_CLOSE codes by name.
	Answers  map[string]int `json:"answers,omitempty"`
	Findings []Finding      `json:"findings"`
	// KCOV is the module's coverage as the guest recorded it, Coverage
	// the same mapped to the module's functions and lines (on the host,
	// with the module file).
	KCOV     *kcov.Trace    `json:"kcov,omitempty"`
	Coverage *kcov.Coverage `json:"coverage,omitempty"`
}

const windowSize = 20

type fuzzer struct {
	o      Options
	rep    *Report
	recent []Input
	stls   *conformance.TLSPair
	addr   string // the target server's
	conn   *quicpeer.Conn
	role   conformance.Role
	end    func() // ends the target client of the current connection
	lnAddr string
	raw    *net.UDPConn
}

// Run fuzzes the target until the inputs or the time run out, ctx ends, or
// a liveness check fails twice in a row.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Target == nil {
		return nil, errors.New("fuzz: no target")
	}
	if o.Inputs == 0 && o.Time == 0 && o.Replay == nil {
		return nil, errors.New("fuzz: give a number of inputs or a time")
	}
	if o.Batch == 0 {
		o.Batch = 50
	}
	if o.CoverEvery == 0 {
		o.CoverEvery = 10
	}
	if o.ProgressEvery == 0 {
		o.ProgressEvery = 10 * time.Second
	}
	if len(o.Roles) == 0 {
		o.Roles = []conformance.Role{conformance.Server}
	}
	pair, err := conformance.NewTLSPair()
	if err != nil {
		return nil, err
	}
	f := &fuzzer{o: o, stls: pair, rep: &Report{Schema: Schema, Target: o.Target.Name(), Seed: o.Gen.Seed, Started: time.Now(), Answers: map[string]int{}}}
	if o.Leaks != nil {
		if err := o.Leaks.Baseline(); err != nil {
			return nil, fmt.Errorf("fuzz: leak baseline: %w", err)
		}
	}
	tctx, cancel := context.WithCancel(ctx)
	if f.addr, err = o.Target.Serve(tctx, pair.Server); err != nil {
		cancel()
		return nil, fmt.Errorf("fuzz: start the %s server: %w", o.Target.Name(), err)
	}
	if f.raw, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
		cancel()
		return nil, err
	}
	runErr := f.loop(ctx)
	f.drop()
	f.raw.Close()
	cancel()
	if o.Cover != nil {
		o.Cover.Collect()
	}
	if o.Leaks != nil && runErr == nil {
		lctx, lcancel := context.WithTimeout(context.Background(), 60*time.Second)
		if err := o.Leaks.Settled(lctx); err != nil {
			f.find("leak", err.Error(), nil)
		}
		lcancel()
	}
	f.checkKernel()
	f.rep.Seconds = time.Since(f.rep.Started).Seconds()
	return f.rep, runErr
}

func (f *fuzzer) loop(ctx context.Context) error {
	deadline := time.Time{}
	if f.o.Time > 0 {
		deadline = f.rep.Started.Add(f.o.Time)
	}
	lastProgress := time.Now()
	failedLiveness := 0
	for n := 0; ; n++ {
		if ctx.Err() != nil || (f.o.Inputs > 0 && n >= f.o.Inputs) || (!deadline.IsZero() && time.Now().After(deadline)) ||
			(f.o.Replay != nil && n >= len(f.o.Replay)) {
			return nil
		}
		if n%f.o.Batch == 0 {
			f.role = f.o.Roles[(n/f.o.Batch)%len(f.o.Roles)]
			f.drop()
		}
		in := f.input(n)
		if f.o.Mark != "" && f.o.Replay == nil && in.Seq == f.o.MarkAt {
			in.Mark = f.o.Mark
		}
		if f.o.Log != nil {
			if err := f.o.Log.Write(in); err != nil {
				return err
			}
		}
		if f.o.Inject != nil {
			f.o.Inject(in.Seq)
		}
		if in.Mark != "" {
			if err := Act(in.Mark); err != nil {
				return err
			}
		}
		if err := f.send(ctx, in); err != nil {
			f.find("liveness", fmt.Sprintf("no connection for input %d: %v", in.Seq, err), nil)
			return err
		}
		if f.o.Cover != nil && (n+1)%f.o.CoverEvery == 0 {
			f.o.Cover.Collect()
		}
		if (n+1)%f.o.Batch == 0 {
			if err := f.live(ctx); err != nil {
				failedLiveness++
				f.find("liveness", err.Error(), nil)
				if failedLiveness > 1 {
					return nil // the target is gone: what follows would say nothing
				}
			} else {
				failedLiveness = 0
			}
			f.checkKernel()
		}
		if f.o.Progress != nil && time.Since(lastProgress) >= f.o.ProgressEvery {
			lastProgress = time.Now()
			s := time.Since(f.rep.Started).Seconds()
			fmt.Fprintf(f.o.Progress, "fuzz: %d inputs (%d after a handshake) in %.0fs, %.1f/s, %d connections (%d closed by the target), %d findings\n",
				f.rep.Inputs, f.rep.PostHandshake, s, float64(f.rep.Inputs)/s, f.rep.Connections, f.rep.Closed, len(f.rep.Findings))
		}
	}
}

func (f *fuzzer) input(n int) Input {
	if f.o.Replay != nil {
		return f.o.Replay[n]
	}
	in := f.o.Gen.Input(n)
	if f.role == conformance.Client && in.Kind == KindInitial {
		// A client takes no client Initials: a 1-RTT input instead.
		g := f.o.Gen
		g.InitialShare = 0
		in = g.Input(n)
	}
	return in
}

func (f *fuzzer) send(ctx context.Context, in Input) error {
	f.recent = append(f.recent, in)
	if len(f.recent) > windowSize {
		f.recent = f.recent[1:]
	}
	f.rep.Inputs++
	if in.Kind == KindInitial {
		f.rep.PreHandshake++
		target, _ := net.ResolveUDPAddr("udp", f.addr)
		_, err := f.raw.WriteToUDP(in.Payload, target)
		return err
	}
	if f.conn == nil || f.conn.Closed() != nil {
		if err := f.connect(ctx); err != nil {
			// One more try: a target that closed on the last input may
			// still be tearing it down.
			if err = f.connect(ctx); err != nil {
				return err
			}
		}
	}
	f.rep.PostHandshake++
	err := f.conn.SendHeader(quicwire.OneRTT, func(h *quicwire.Header) { h.Reserved = in.Reserved }, quicwire.Raw(in.Payload))
	if err != nil {
		return err
	}
	// Take the target's answers (acknowledgments, a close) as they come,
	// without waiting for more.
	f.conn.Poll(2*time.Millisecond, nil)
	if cc := f.conn.Closed(); cc != nil {
		f.rep.Closed++
		f.rep.Answers[closeName(cc)]++
	}
	return nil
}

func closeName(cc *quicwire.ConnectionClose) string {
	if cc.App {
		return fmt.Sprintf("application 0x%x", cc.ErrorCode)
	}
	return quicwire.TransportError(cc.ErrorCode).String()
}

// connect makes a connection with the target in the current role.
func (f *fuzzer) connect(ctx context.Context) error {
	f.drop()
	c, end, err := f.dial(ctx)
	if err != nil {
		return err
	}
	f.conn, f.end = c, end
	f.rep.Connections++
	return nil
}

func (f *fuzzer) dial(ctx context.Context) (*quicpeer.Conn, func(), error) {
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if f.role == conformance.Server {
		c, err := quicpeer.Dial(hctx, f.addr, quicpeer.Config{TLS: f.stls.Client})
		return c, func() {}, err
	}
	ln, err := quicpeer.Listen("127.0.0.1:0", quicpeer.Config{TLS: f.stls.Server})
	if err != nil {
		return nil, nil, err
	}
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.o.Target.Connect(cctx, ln.Addr().String(), f.stls.Client)
	}()
	end := func() {
		ccancel()
		<-done
		ln.Close()
	}
	c, err := ln.Accept(hctx)
	if err != nil {
		end()
		return nil, nil, err
	}
	return c, end, nil
}

// drop ends the current connection.
func (f *fuzzer) drop() {
	if f.conn != nil {
		if f.conn.Closed() == nil {
			f.conn.Close(0)
		} else {
			f.conn.Abort()
		}
		f.conn = nil
	}
	if f.end != nil {
		f.end()
		f.end = nil
	}
}

// live checks that a fresh connection still completes its handshake and
// carries a stream.
func (f *fuzzer) live(ctx context.Context) error {
	f.drop()
	c, end, err := f.dial(ctx)
	if err != nil {
		return fmt.Errorf("a fresh %s handshake after input %d failed: %w", f.role, f.last(), err)
	}
	defer end()
	defer c.Close(0)
	id := conformance.Side{Target: f.role}.Ours(false, 0)
	if err := c.Send(quicwire.OneRTT, quicwire.Stream{StreamID: id, Data: []byte("alive?"), Fin: true}); err != nil {
		return err
	}
	// The target's reading end acknowledges the stream.
	if _, err := c.Poll(5*time.Second, func(p quicpeer.Packet) bool { return acksAny(p) }); err != nil {
		return err
	}
	if c.Closed() != nil {
		return fmt.Errorf("after input %d the target closed a fresh, well-behaved connection: %v", f.last(), closeName(c.Closed()))
	}
	return nil
}

func acksAny(p quicpeer.Packet) bool {
	for _, fr := range p.Frames {
		if t := fr.FrameType(); t == quicwire.TypeAck || t == quicwire.TypeAckECN {
			return p.Type == quicwire.OneRTT
		}
	}
	return false
}

func (f *fuzzer) last() int {
	if len(f.recent) == 0 {
		return -1
	}
	return f.recent[len(f.recent)-1].Seq
}

func (f *fuzzer) checkKernel() {
	if f.o.Kernel == nil {
		return
	}
	if lines := f.o.Kernel.Check(); len(lines) > 0 {
		f.find("kernel-log", lines[0], lines)
	}
}

func (f *fuzzer) find(oracle, detail string, lines []string) {
	f.rep.Findings = append(f.rep.Findings, Finding{Oracle: oracle, Detail: detail, Lines: lines, After: f.last(),
		Window: append([]Input(nil), f.recent...)})
}
