//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// Handshake mode (Spec.Mode ModeHandshake) measures connection setup
// instead of goodput. Every exchange is a fresh connection: the client
// dials, sends a request of the cell's size, reads an answer of the same
// size and closes. A sample counts the exchanges completed per second and
// the time from the start of each dial to the first byte of its answer
// (TTFB), with Streams exchanges running at once. The setups are each
// transport's full handshake ("1-RTT": kquic, quic-go, ktls's TCP + TLS 1.3
// with kernel TLS after the handshake, plain TCP) and, for the QUIC
// transports, the resumption of a session ticket from an earlier
// connection to the same server with the request sent as 0-RTT data (Cell
// Early).

// validateHandshake checks a handshake-mode spec, naming every problem. The
// directions and encryption do not apply: every setup encrypts but plain
// TCP.
func (s *Spec) validateHandshake() error {
	var errs []error
	errs = append(errs, s.validateAxes("request")...)
	if len(s.GSO) == 0 {
		errs = append(errs, errors.New("--gso needs at least one of on, off"))
	}
	if s.Streams < 1 || s.Streams > 1000 {
		errs = append(errs, fmt.Errorf("streams (handshakes at once) %d: must be 1..1000", s.Streams))
	}
	if s.Time <= windowLead {
		errs = append(errs, fmt.Errorf("time %v: must be over %v", s.Time, windowLead))
	}
	if s.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup %v: must not be negative", s.Warmup))
	}
	if s.Repeat < 1 {
		errs = append(errs, fmt.Errorf("repeat %d: must be at least 1", s.Repeat))
	}
	return errors.Join(errs...)
}

// handshakeCells enumerates a handshake-mode matrix: every transport's full
// handshake and, for the QUIC transports, 0-RTT resumption, per MTU, GSO
// setting and request size.
func (s *Spec) handshakeCells() []Cell {
	var out []Cell
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, size := range s.Sizes {
				for _, t := range s.Transports {
					c := Cell{Transport: t, Size: size, MTU: mtu, GSO: gso, Crypto: t != "tcp", Direction: "up", Streams: s.Streams}
					out = append(out, c)
					if transport.SupportsEarly(t) {
						c.Early = true
						out = append(out, c)
					}
				}
			}
		}
	}
	return out
}

// SetupName names a handshake-mode cell's setup: "kquic 1-RTT",
// "quic-go 0-RTT", "ktls (TCP + TLS 1.3)", "tcp".
func SetupName(c Cell) string {
	switch {
	case c.Early:
		return c.Transport + " 0-RTT"
	case transport.SupportsEarly(c.Transport):
		return c.Transport + " 1-RTT"
	case c.Transport == "ktls":
		return "ktls (TCP + TLS 1.3)"
	case c.Transport == "tcp":
		return "tcp (no TLS)"
	}
	return c.Transport
}

// exchangeRecord is one completed exchange of a sample.
type exchangeRecord struct {
	end time.Time
	ex  transport.Exchange
}

// measureHandshakes measures one sample of a handshake-mode cell on the
// single-host topology: c.Streams clients run exchanges back to back
// through the warmup and the window; the sample holds the exchanges that
// completed within the window. Any exchange that fails (or, for 0-RTT
// cells, does not use 0-RTT) fails the sample, naming the first error.
func measureHandshakes(ctx context.Context, client ClientSide, server ServerSide, c Cell, o transport.Options, warmup, dur time.Duration, probes []Probe) (_ Sample, rerr error) {
	ls, ok := server.(localServer)
	if !ok {
		return Sample{}, errors.New("handshake mode runs on the single-host topology only")
	}
	ctx, cancel := context.WithTimeout(ctx, warmup+dur+2*transport.ExchangeTimeout+30*time.Second)
	defer cancel()
	name := SetupName(c)
	var srv transport.HandshakeServer
	if err := ls.t.Server.Do(func() (err error) {
		srv, err = transport.ListenHandshakes(c.Transport, netip.AddrPortFrom(topo.ServerAddr, 0), o, c.Size)
		return err
	}); err != nil {
		return Sample{}, fmt.Errorf("%s server: %w", name, err)
	}
	defer func() {
		if err := srv.Close(); rerr == nil && err != nil {
			rerr = err
		}
	}()
	var cl transport.HandshakeClient
	if err := client.Do(func() (err error) {
		cl, err = transport.NewHandshakeClient(c.Transport, srv.Addr(), o, c.Early)
		return err
	}); err != nil {
		return Sample{}, fmt.Errorf("%s client: %w", name, err)
	}
	defer cl.Close()
	if c.Early {
		if err := client.Do(func() error { return cl.Prime(ctx, c.Size) }); err != nil {
			return Sample{}, fmt.Errorf("%s: %w", name, err)
		}
	}

	var (
		stop     atomic.Bool
		failed   atomic.Int64
		notEarly atomic.Int64
		errOnce  sync.Once
		firstErr error
		mu       sync.Mutex
		recs     []exchangeRecord
		wg       sync.WaitGroup
	)
	for i := 0; i < c.Streams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, reply := make([]byte, c.Size), make([]byte, c.Size)
			for j := range req {
				req[j] = byte(j * 7)
			}
			var mine []exchangeRecord
			client.Do(func() error {
				for !stop.Load() && ctx.Err() == nil {
					ex, err := cl.Exchange(ctx, req, reply)
					if err != nil {
						if ctx.Err() != nil {
							return nil
						}
						failed.Add(1)
						errOnce.Do(func() { firstErr = err })
						continue
					}
					if c.Early && !ex.Early {
						notEarly.Add(1)
						errOnce.Do(func() {
							firstErr = fmt.Errorf("an exchange did not use 0-RTT (resumed: %v)", ex.Resumed)
						})
					}
					mine = append(mine, exchangeRecord{end: time.Now(), ex: ex})
				}
				return nil
			})
			mu.Lock()
			recs = append(recs, mine...)
			mu.Unlock()
		}()
	}
	// However the window ends, the clients stop and are waited for: every
	// exchange ends within ExchangeTimeout.
	stopped := false
	stopClients := func() {
		if !stopped {
			stopped = true
			stop.Store(true)
			wg.Wait()
		}
	}
	defer stopClients()

	sleep := func(d time.Duration) error { return sleepCtx(ctx, d) }
	if err := sleep(warmup); err != nil {
		return Sample{}, err
	}
	pw := &probeWindow{probes: probes}
	defer pw.stop() // on an early return
	pw.start(ctx)
	window := func(open bool) (time.Time, error) { return pw.markAhead(ctx, open) }
	w0, err := window(true)
	if err != nil {
		return Sample{}, err
	}
	c0 := mustCPU()
	if err := sleep(dur - windowLead); err != nil {
		return Sample{}, err
	}
	w1, err := window(false)
	if err != nil {
		return Sample{}, err
	}
	c1 := mustCPU()
	counted, probeMissing := pw.stop()
	stopClients()

	total := int64(len(recs)) + failed.Load()
	if n := failed.Load() + notEarly.Load(); n > 0 {
		return Sample{}, fmt.Errorf("%s: %d of %d exchanges failed (%d did not use 0-RTT); the first: %w", name, n, total, notEarly.Load(), firstErr)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].end.Before(recs[j].end) })
	var in []transport.Exchange
	for _, r := range recs {
		if !r.end.Before(w0) && r.end.Before(w1) {
			in = append(in, r.ex)
		}
	}
	secs := w1.Sub(w0).Seconds()
	if len(in) == 0 {
		return Sample{}, fmt.Errorf("%s: no exchange completed in the %v window (%d in all)", name, w1.Sub(w0).Round(time.Millisecond), total)
	}
	hs, err := newHandshakeSample(in, secs, c.Streams)
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %w", name, err)
	}
	cpu, _ := CPUBetween(c0, c1)
	bytes := int64(len(in)) * int64(2*c.Size)
	return Sample{
		Bytes: bytes, Seconds: secs, CPU: cpu, Streams: c.Streams, Warmup: warmup.Seconds(),
		Finished: time.Now().UTC(), Counters: counted, CountersMissing: probeMissing, Handshake: hs,
	}, nil
}
