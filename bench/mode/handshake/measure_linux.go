//go:build linux

package handshake

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

func init() {
	mode.Register(Mode{mode.Common{Mode: Name, SingleHost: "handshake mode runs on the single-host topology only; drop --peer"}})
}

// Mode is the handshake mode.
type Mode struct{ mode.Common }

// Sample measures one sample of the cell on the single-host topology.
func (Mode) Sample(ctx context.Context, env *mode.Env, c matrix.Cell, i int) (results.Sample, error) {
	o, probes, err := env.Prepare(c, i)
	if err != nil {
		return results.Sample{}, err
	}
	return Measure(ctx, env.Client, env.Server, c, o, env.Spec.Warmup, env.Spec.Time, probes)
}

// ErrNoExchange is a sample's error when no exchange completed within its
// window: the window is short against an exchange on this machine.
var ErrNoExchange = errors.New("no exchange completed")

// exchangeRecord is one completed exchange of a sample.
type exchangeRecord struct {
	end time.Time
	ex  transport.Exchange
}

// Measure measures one sample of a handshake-mode cell on the
// single-host topology: c.Streams clients run exchanges back to back
// through the warmup and the window; the sample holds the exchanges that
// completed within the window. Any exchange that fails (or, for 0-RTT
// cells, does not use 0-RTT) fails the sample, naming the first error.
func Measure(ctx context.Context, client side.ClientSide, server side.ServerSide, c matrix.Cell, o transport.Options, warmup, dur time.Duration, probes []mode.Probe) (_ results.Sample, rerr error) {
	ls, ok := server.(side.Local)
	if !ok {
		return results.Sample{}, errors.New("handshake mode runs on the single-host topology only")
	}
	ctx, cancel := context.WithTimeout(ctx, warmup+dur+2*transport.ExchangeTimeout+30*time.Second)
	defer cancel()
	name := SetupName(c)
	srv, err := listenHandshakes(ls, c, o)
	if err != nil {
		return results.Sample{}, err
	}
	defer func() {
		if err := srv.Close(); rerr == nil && err != nil {
			rerr = err
		}
	}()
	cl, err := dialHandshakes(ctx, client, srv, c, o)
	if err != nil {
		return results.Sample{}, err
	}
	defer cl.Close()

	l := &handshakeLoad{}
	l.start(ctx, client, cl, c)
	// However the window ends, the clients stop and are waited for: every
	// exchange ends within ExchangeTimeout.
	defer l.halt()

	sleep := func(d time.Duration) error { return mode.Sleep(ctx, d) }
	if err := sleep(warmup); err != nil {
		return results.Sample{}, err
	}
	pw := mode.NewWindow(probes)
	defer pw.Stop() // on an early return
	pw.Start(ctx)
	window := func(open bool) (time.Time, error) { return pw.MarkAhead(ctx, open) }
	w0, err := window(true)
	if err != nil {
		return results.Sample{}, err
	}
	c0 := host.SnapshotCPU()
	if err := sleep(dur - mode.WindowLead); err != nil {
		return results.Sample{}, err
	}
	w1, err := window(false)
	if err != nil {
		return results.Sample{}, err
	}
	c1 := host.SnapshotCPU()
	counted, probeMissing := pw.Stop()
	l.halt()

	in, err := l.within(w0, w1)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s: %w", name, err)
	}
	secs := w1.Sub(w0).Seconds()
	hs, err := newHandshakeSample(in, secs, c.Streams)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s: %w", name, err)
	}
	cpu, cpuNote := host.CPUOf(c0, c1)
	bytes := int64(len(in)) * int64(2*c.Size)
	return results.Sample{
		Bytes: bytes, Seconds: secs, CPU: cpu, CPUUnavailable: cpuNote, Streams: c.Streams, Warmup: warmup.Seconds(),
		Finished: time.Now().UTC(), Counters: counted, CountersMissing: probeMissing, Payload: hs,
	}, nil
}

// listenHandshakes opens the handshake server of a cell in the server's
// namespace.
func listenHandshakes(ls side.Local, c matrix.Cell, o transport.Options) (transport.HandshakeServer, error) {
	var srv transport.HandshakeServer
	if err := ls.T.Server.Do(func() (err error) {
		srv, err = transport.ListenHandshakes(c.Transport, netip.AddrPortFrom(topo.ServerAddr, 0), o, c.Size)
		return err
	}); err != nil {
		return nil, fmt.Errorf("%s server: %w", SetupName(c), err)
	}
	return srv, nil
}

// dialHandshakes makes the handshake client of a cell in the client's
// namespace; for 0-RTT cells it primes the client with a session first.
func dialHandshakes(ctx context.Context, client side.ClientSide, srv transport.HandshakeServer, c matrix.Cell, o transport.Options) (transport.HandshakeClient, error) {
	name := SetupName(c)
	var cl transport.HandshakeClient
	if err := client.Do(func() (err error) {
		cl, err = transport.NewHandshakeClient(c.Transport, srv.Addr(), o, c.Early)
		return err
	}); err != nil {
		return nil, fmt.Errorf("%s client: %w", name, err)
	}
	if c.Early {
		if err := client.Do(func() error { return cl.Prime(ctx, c.Size) }); err != nil {
			cl.Close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return cl, nil
}

// handshakeLoad is the clients of a handshake-mode sample, running
// exchanges back to back until halted.
type handshakeLoad struct {
	stop     atomic.Bool
	failed   atomic.Int64
	notEarly atomic.Int64
	errOnce  sync.Once
	firstErr error
	mu       sync.Mutex
	recs     []exchangeRecord
	wg       sync.WaitGroup
	stopped  bool
}

// start runs c.Streams clients, each in the client's namespace.
func (l *handshakeLoad) start(ctx context.Context, client side.ClientSide, cl transport.HandshakeClient, c matrix.Cell) {
	for i := 0; i < c.Streams; i++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.run(ctx, client, cl, c)
		}()
	}
}

// fail records that an exchange failed, keeping the first error.
func (l *handshakeLoad) fail(err error) {
	l.errOnce.Do(func() { l.firstErr = err })
}

// run is one client's exchanges until halted or ctx ends.
func (l *handshakeLoad) run(ctx context.Context, client side.ClientSide, cl transport.HandshakeClient, c matrix.Cell) {
	req, reply := make([]byte, c.Size), make([]byte, c.Size)
	for j := range req {
		req[j] = byte(j * 7)
	}
	var mine []exchangeRecord
	err := client.Do(func() error {
		for !l.stop.Load() && ctx.Err() == nil {
			ex, err := cl.Exchange(ctx, req, reply)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				l.failed.Add(1)
				l.fail(err)
				continue
			}
			if c.Early && !ex.Early {
				l.notEarly.Add(1)
				l.fail(fmt.Errorf("an exchange did not use 0-RTT (resumed: %v)", ex.Resumed))
			}
			mine = append(mine, exchangeRecord{end: time.Now(), ex: ex})
		}
		return nil
	})
	if err != nil { // the client's namespace could not be entered
		l.failed.Add(1)
		l.fail(fmt.Errorf("client: %w", err))
	}
	l.mu.Lock()
	l.recs = append(l.recs, mine...)
	l.mu.Unlock()
}

// halt stops the clients and waits for them (once).
func (l *handshakeLoad) halt() {
	if !l.stopped {
		l.stopped = true
		l.stop.Store(true)
		l.wg.Wait()
	}
}

// within is the exchanges of halted clients that completed in the window
// [w0, w1), in the order they completed; an error when any exchange
// failed (or, for early cells, did not use 0-RTT) or none completed.
func (l *handshakeLoad) within(w0, w1 time.Time) ([]transport.Exchange, error) {
	total := int64(len(l.recs)) + l.failed.Load()
	if n := l.failed.Load() + l.notEarly.Load(); n > 0 {
		return nil, fmt.Errorf("%d of %d exchanges failed (%d did not use 0-RTT); the first: %w", n, total, l.notEarly.Load(), l.firstErr)
	}
	sort.Slice(l.recs, func(i, j int) bool { return l.recs[i].end.Before(l.recs[j].end) })
	var in []transport.Exchange
	for _, r := range l.recs {
		if !r.end.Before(w0) && r.end.Before(w1) {
			in = append(in, r.ex)
		}
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("%w in the %v window (%d in all): a setup took longer than the window (a lossy --netem profile retransmits a SYN or an Initial after a second or more); raise --time", ErrNoExchange, w1.Sub(w0).Round(time.Millisecond), total)
	}
	return in, nil
}
