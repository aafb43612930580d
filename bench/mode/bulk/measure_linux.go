//go:build linux

package bulk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/transport"
)

func init() { mode.Register(Mode{mode.Common{Mode: Name}}) }

// emptyWindows is how many windows in a row may see no data before a
// sample fails (see Measure).
const emptyWindows = 3

// Mode is the bulk mode.
type Mode struct{ mode.Common }

// Sample measures one sample of the cell between the run's two ends.
func (Mode) Sample(ctx context.Context, env *mode.Env, c matrix.Cell, i int) (results.Sample, error) {
	tr, o, probes, err := env.Start(c, i)
	if err != nil {
		return results.Sample{}, err
	}
	return Measure(ctx, env.Client, env.Server, tr, c, o, env.Spec.Affinity, env.Spec.Warmup, env.Spec.Time, probes)
}

// Summary is the goodput's median, the samples and the spread.
func (Mode) Summary(r *results.CellResult) string {
	return mode.GoodputSummary(r)
}

// Measure measures one sample of a cell between the two sides: the server
// listens, the client dials and opens the streams, and after the warmup
// the receiver's byte count and both hosts' CPU are read at the start and
// the end of the window (the streams pinned as aff says; nil: not pinned).
func Measure(ctx context.Context, client side.ClientSide, server side.ServerSide, tr transport.Transport, c matrix.Cell, o transport.Options, aff *matrix.Affinity, warmup, dur time.Duration, probes []mode.Probe) (_ results.Sample, rerr error) {
	ctx, cancel := context.WithTimeout(ctx, warmup+dur+60*time.Second)
	defer cancel()
	ss, err := server.Listen(ctx, tr.Name(), o, c.Size)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s server: %w", tr.Name(), err)
	}
	p := side.NewPumps(c.Size, o.ReadSize, aff.ClientCPU())
	var d transport.Dialer
	var stopOnce sync.Once
	var stopErr error
	shutdown := func() {
		if d != nil {
			p.Close(d)
		} else {
			p.Close()
		}
		stopOnce.Do(func() {
			sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
			defer scancel()
			stopErr = ss.Stop(sctx)
		})
	}
	defer func() {
		shutdown()
		err := p.Wait(tr.Name())
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
	up := c.Direction != matrix.Down
	if err := openStreams(ctx, client, d, p, tr.Name(), c.Streams, up); err != nil {
		return results.Sample{}, err
	}

	if err := mode.Sleep(ctx, warmup); err != nil {
		return results.Sample{}, err
	}
	var (
		sp     mode.Span
		b0, b1 int64 // the bytes this end received, at the edges
		secs   float64
		bytes  int64
	)
	// A window in which nothing arrived is measured again, up to
	// emptyWindows times: on a machine whose CPU is taken away for a
	// moment (a hypervisor's steal, a loaded CI runner) a short window can
	// pass while the sender is not scheduled. A transport that moves
	// nothing at all still fails, after them.
	for try := 1; ; try++ {
		sp, err = mode.MeasureWindow(ctx, tr.Name(), probes, ss, dur, func(open bool) {
			if open {
				b0 = p.Received()
			} else {
				b1 = p.Received()
			}
		})
		if err != nil {
			return results.Sample{}, err
		}
		secs = sp.Seconds()
		bytes = b1 - b0
		if up {
			bytes = sp.S1.Received - sp.S0.Received
			if sp.S0.CPU != nil && sp.S1.CPU != nil { // the receiver's clock
				secs = sp.S1.CPU.At.Sub(sp.S0.CPU.At).Seconds()
			}
		}
		if bytes > 0 {
			break
		}
		if try == emptyWindows {
			return results.Sample{}, fmt.Errorf("%s: no data arrived in %d windows of %v", tr.Name(), try, dur)
		}
	}
	shutdown()
	smp := results.Sample{
		Bytes: bytes, Seconds: secs, Bps: float64(bytes) * 8 / secs,
		Streams: c.Streams, Warmup: warmup.Seconds(), Finished: time.Now().UTC(),
	}
	_, local := server.(side.Local)
	sp.Fill(&smp, bytes, aff, local)
	return smp, nil
}

// openStreams opens n streams on d from the client's namespace, writes
// each one's direction marker and starts its pump.
func openStreams(ctx context.Context, client side.ClientSide, d transport.Dialer, p *side.Pumps, name string, n int, up bool) error {
	mark := byte(side.MarkUp)
	if !up {
		mark = side.MarkDown
	}
	for i := 0; i < n; i++ {
		var s io.ReadWriteCloser
		if err := client.Do(func() (err error) {
			s, err = d.Open(ctx)
			return err
		}); err != nil {
			return fmt.Errorf("%s: open stream %d: %w", name, i, err)
		}
		if _, err := s.Write([]byte{mark}); err != nil {
			s.Close()
			return fmt.Errorf("%s: stream %d: %w", name, i, err)
		}
		p.Start(s, up)
	}
	return nil
}
