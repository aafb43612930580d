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

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

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
func measureHandshakes(ctx context.Context, client ClientSide, server ServerSide, c matrix.Cell, o transport.Options, warmup, dur time.Duration, probes []Probe) (_ results.Sample, rerr error) {
	ls, ok := server.(localServer)
	if !ok {
		return results.Sample{}, errors.New("handshake mode runs on the single-host topology only")
	}
	ctx, cancel := context.WithTimeout(ctx, warmup+dur+2*transport.ExchangeTimeout+30*time.Second)
	defer cancel()
	name := matrix.SetupName(c)
	var srv transport.HandshakeServer
	if err := ls.t.Server.Do(func() (err error) {
		srv, err = transport.ListenHandshakes(c.Transport, netip.AddrPortFrom(topo.ServerAddr, 0), o, c.Size)
		return err
	}); err != nil {
		return results.Sample{}, fmt.Errorf("%s server: %w", name, err)
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
		return results.Sample{}, fmt.Errorf("%s client: %w", name, err)
	}
	defer cl.Close()
	if c.Early {
		if err := client.Do(func() error { return cl.Prime(ctx, c.Size) }); err != nil {
			return results.Sample{}, fmt.Errorf("%s: %w", name, err)
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
			err := client.Do(func() error {
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
			if err != nil { // the client's namespace could not be entered
				failed.Add(1)
				errOnce.Do(func() { firstErr = fmt.Errorf("client: %w", err) })
			}
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
		return results.Sample{}, err
	}
	pw := &probeWindow{probes: probes}
	defer pw.stop() // on an early return
	pw.start(ctx)
	window := func(open bool) (time.Time, error) { return pw.markAhead(ctx, open) }
	w0, err := window(true)
	if err != nil {
		return results.Sample{}, err
	}
	c0 := host.SnapshotCPU()
	if err := sleep(dur - windowLead); err != nil {
		return results.Sample{}, err
	}
	w1, err := window(false)
	if err != nil {
		return results.Sample{}, err
	}
	c1 := host.SnapshotCPU()
	counted, probeMissing := pw.stop()
	stopClients()

	total := int64(len(recs)) + failed.Load()
	if n := failed.Load() + notEarly.Load(); n > 0 {
		return results.Sample{}, fmt.Errorf("%s: %d of %d exchanges failed (%d did not use 0-RTT); the first: %w", name, n, total, notEarly.Load(), firstErr)
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
		return results.Sample{}, fmt.Errorf("%s: no exchange completed in the %v window (%d in all)", name, w1.Sub(w0).Round(time.Millisecond), total)
	}
	hs, err := newHandshakeSample(in, secs, c.Streams)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s: %w", name, err)
	}
	cpu, cpuNote := host.CPUOf(c0, c1)
	bytes := int64(len(in)) * int64(2*c.Size)
	return results.Sample{
		Bytes: bytes, Seconds: secs, CPU: cpu, CPUUnavailable: cpuNote, Streams: c.Streams, Warmup: warmup.Seconds(),
		Finished: time.Now().UTC(), Counters: counted, CountersMissing: probeMissing, Handshake: hs,
	}, nil
}
