//go:build linux

package rr

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"kquic.dev/bench/latency"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/transport"
)

func init() { mode.Register(Mode{mode.Common{Mode: Name}}) }

// Mode is the rr mode.
type Mode struct{ mode.Common }

// Sample measures one sample of the cell between the run's two ends.
func (Mode) Sample(ctx context.Context, env *mode.Env, c matrix.Cell, i int) (results.Sample, error) {
	tr, o, probes, err := env.Start(c, i)
	if err != nil {
		return results.Sample{}, err
	}
	return Measure(ctx, env.Client, env.Server, tr, c, o, env.Spec.Warmup, env.Spec.Time, probes)
}

// Summary is the requests per second's median and the round trip's
// percentiles.
func (Mode) Summary(r *results.CellResult) string {
	sum := SummaryOf(r)
	if sum == nil {
		return "no round trips recorded"
	}
	l := sum.Latency
	return mode.SummaryOf(fmt.Sprintf("%.0f requests/s", sum.MedianPerSecond), len(r.Samples), r.Spread, r.WideSpread,
		fmt.Sprintf(", round trip p50 %.1f µs, p99 %.1f, p99.99 %.1f", us(l.P50), us(l.P99), us(l.P9999)))
}

// Phases of an rr sample, which the connections' loops read before each
// round trip: no timer runs in the loop.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// rrConn is one connection of an rr sample, with one request in flight.
type rrConn struct {
	s    io.ReadWriteCloser
	req  []byte
	resp []byte
	hist *latency.Histogram
	n    int64
	err  error
	// first and last bound the measured round trips, and busy adds up
	// their durations: busy over last-first is the time the connection
	// had a request in flight, 1 less the loop's own overhead.
	first, last time.Time
	busy        time.Duration
}

// loop does round trips until the phase is phaseStop, recording those that
// start in phaseMeasure. Per round trip: a write, the reads of the
// response, two clock reads and, when measuring, a histogram increment;
// nothing is allocated.
func (c *rrConn) loop(phase *atomic.Int32) {
	for {
		ph := phase.Load()
		if ph == phaseStop {
			return
		}
		t0, t1, err := c.trip()
		if err != nil {
			c.err = err
			return
		}
		if ph == phaseMeasure {
			if c.n == 0 {
				c.first = t0
			}
			c.last = t1
			d := t1.Sub(t0)
			c.busy += d
			c.hist.Record(d)
			c.n++
		}
	}
}

// trip does one round trip and says when it started and ended.
func (c *rrConn) trip() (t0, t1 time.Time, err error) {
	t0 = time.Now()
	if _, err := c.s.Write(c.req); err != nil {
		return t0, t0, fmt.Errorf("request: %w", err)
	}
	if _, err := io.ReadFull(c.s, c.resp); err != nil {
		return t0, t0, fmt.Errorf("response: %w", err)
	}
	return t0, time.Now(), nil
}

// Measure measures one sample of an rr cell: Conns connections, each its
// own dialer and stream, each doing round trips one at a time; after the
// warmup, the round trips that start within the window are counted and
// their times recorded. The probes (--explain, --capture) cover the window
// as in bulk mode; the sample's Bytes are the requests' and responses'.
func Measure(ctx context.Context, client side.ClientSide, server side.ServerSide, tr transport.Transport, c matrix.Cell, o transport.Options, warmup, dur time.Duration, probes []mode.Probe) (_ results.Sample, rerr error) {
	ctx, cancel := context.WithTimeout(ctx, warmup+dur+60*time.Second)
	defer cancel()
	o.NoDelay = true
	ss, err := server.Listen(ctx, tr.Name(), o, c.Size)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s server: %w", tr.Name(), err)
	}
	l := &rrLoad{name: tr.Name(), ss: ss}
	defer func() {
		if err := l.close(ctx); rerr == nil {
			rerr = err
		}
	}()
	co := o
	co.PeerCert = server.Certificate()
	if err := l.dial(ctx, client, tr, c, co); err != nil {
		return results.Sample{}, err
	}
	for _, rc := range l.conns {
		l.wg.Add(1)
		go func() { defer l.wg.Done(); rc.loop(&l.phase) }()
	}

	if err := mode.Sleep(ctx, warmup); err != nil {
		return results.Sample{}, err
	}
	sp, err := mode.MeasureWindow(ctx, tr.Name(), probes, ss, dur, func(open bool) {
		if open {
			l.phase.Store(phaseMeasure)
		} else {
			l.phase.Store(phaseStop)
		}
	})
	if err != nil {
		return results.Sample{}, err
	}
	// Each loop ends after the round trip in progress; then the
	// histograms are theirs no more.
	if !l.waitLoops() {
		return results.Sample{}, fmt.Errorf("%s: a round trip did not end within 10s of the window", tr.Name())
	}
	h := latency.New()
	var n int64
	var busy, span time.Duration
	for i, rc := range l.conns {
		if rc.err != nil {
			return results.Sample{}, fmt.Errorf("%s: connection %d: %w", tr.Name(), i, rc.err)
		}
		h.Merge(rc.hist)
		n += rc.n
		busy += rc.busy
		span += rc.last.Sub(rc.first)
	}
	l.shutdown(ctx)
	if n == 0 {
		return results.Sample{}, fmt.Errorf("%s: no round trip completed in %v", tr.Name(), dur)
	}
	secs := sp.Seconds()
	bytes := n * int64(c.ReqSize+c.Size)
	enc, err := h.Encode()
	if err != nil {
		return results.Sample{}, err
	}
	smp := results.Sample{
		Bytes: bytes, Seconds: secs, Bps: float64(bytes) * 8 / secs,
		Streams: c.Conns, Warmup: warmup.Seconds(), Finished: time.Now().UTC(),
	}
	rs := &Sample{Requests: n, PerSecond: float64(n) / secs, Latency: h.Summary(), Histogram: enc}
	if span > 0 {
		rs.InFlight = float64(busy) / float64(span)
	}
	smp.Payload = rs
	sp.Fill(&smp, bytes, nil, false)
	return smp, nil
}

// rrLoad is an rr sample's connections and their loops.
type rrLoad struct {
	name    string
	ss      side.ServerSample
	phase   atomic.Int32
	conns   []*rrConn
	dialers []transport.Dialer
	wg      sync.WaitGroup
	once    sync.Once
	stopErr error
}

// dial opens c.Conns connections from the client's namespace, each its
// own dialer and stream, and sends each stream's header.
func (l *rrLoad) dial(ctx context.Context, client side.ClientSide, tr transport.Transport, c matrix.Cell, co transport.Options) error {
	hdr := Header(c.ReqSize, c.Size)
	for i := 0; i < c.Conns; i++ {
		var d transport.Dialer
		var s io.ReadWriteCloser
		if err := client.Do(func() (err error) {
			if d, err = tr.Dial(ctx, l.ss.Addr(), co); err != nil {
				return err
			}
			l.dialers = append(l.dialers, d)
			s, err = d.Open(ctx)
			return err
		}); err != nil {
			return fmt.Errorf("%s: connection %d: %w", l.name, i, err)
		}
		rc := &rrConn{s: s, req: make([]byte, c.ReqSize), resp: make([]byte, c.Size), hist: latency.New()}
		l.conns = append(l.conns, rc)
		if _, err := s.Write(hdr); err != nil {
			return fmt.Errorf("%s: connection %d: %w", l.name, i, err)
		}
	}
	return nil
}

// shutdown stops the loops, closes the connections and stops the server
// (once).
func (l *rrLoad) shutdown(ctx context.Context) {
	l.once.Do(func() {
		l.phase.Store(phaseStop)
		// Closing the connections ends a loop waiting for a
		// response that will not come.
		for _, d := range l.dialers {
			d.Close()
		}
		for _, rc := range l.conns {
			rc.s.Close()
		}
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer scancel()
		l.stopErr = l.ss.Stop(sctx)
	})
}

// waitLoops waits up to 10s for the loops to end, false when one did not.
func (l *rrLoad) waitLoops() bool {
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// close shuts the load down and waits for its loops: an error when one
// did not stop, or the server's stop failed.
func (l *rrLoad) close(ctx context.Context) error {
	l.shutdown(ctx)
	if !l.waitLoops() {
		return fmt.Errorf("%s: a connection did not stop within 10s of closing", l.name)
	}
	return l.stopErr
}
