//go:build linux

package bulk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/mode/bulk/conns"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/transport"
)

// sample is one sample of a cell as Measure takes it: its servers (one,
// or one per connection on the single-host topology), its connections,
// and their shutdown.
type sample struct {
	ctx    context.Context
	client side.ClientSide
	server side.ServerSide
	tr     transport.Transport
	c      matrix.Cell
	o      transport.Options
	pairs  []matrix.CPUPair // each connection's CPUs; nil: not pinned
	cs     []*conn
	sss    servers
	nic    *queues

	stopOnce sync.Once
	stopErr  error
}

// up says whether the client sends.
func (r *sample) up() bool { return r.c.Direction != matrix.Down }

// nServers is how many servers the sample listens on: one per connection
// on the single-host topology, else one.
func (r *sample) nServers() int {
	if _, local := r.server.(side.Local); local && len(r.cs) > 1 {
		return len(r.cs)
	}
	return 1
}

// shutdown closes the pumps and stops the servers (once).
func (r *sample) shutdown() {
	for _, k := range r.cs {
		if k == nil {
			continue
		}
		if k.d != nil {
			k.p.Close(k.d)
		} else {
			k.p.Close()
		}
	}
	r.stopOnce.Do(func() {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(r.ctx), 15*time.Second)
		defer scancel()
		for _, ss := range r.sss {
			r.stopErr = errors.Join(r.stopErr, ss.Stop(sctx))
		}
	})
}

// end shuts the sample down and waits for its pumps; their errors and the
// servers' become *rerr where there was none.
func (r *sample) end(rerr *error) {
	r.shutdown()
	var errs []error
	for _, k := range r.cs {
		if k != nil {
			errs = append(errs, k.p.Wait(r.tr.Name()))
		}
	}
	if *rerr == nil {
		*rerr = errors.Join(append(errs, r.stopErr)...)
	}
}

// listen starts the servers, each pinned to its connection's server CPU
// where there are several.
func (r *sample) listen() error {
	nsrv := r.nServers()
	for i := 0; i < nsrv; i++ {
		srv := r.server
		if nsrv > 1 && r.pairs != nil {
			l := r.server.(side.Local)
			l.CPU = r.pairs[i].Server
			srv = l
		}
		ss, err := srv.Listen(r.ctx, r.tr.Name(), r.o, r.c.Size)
		if err != nil {
			return fmt.Errorf("%s server: %w", r.tr.Name(), err)
		}
		r.sss = append(r.sss, ss)
	}
	return nil
}

// dial opens the connections and their streams, each connection's pumps
// pinned to its client CPU.
func (r *sample) dial() error {
	co := r.o
	co.PeerCert = r.server.Certificate()
	n, nsrv := len(r.cs), r.nServers()
	for i := range r.cs {
		cpu := -1
		if r.pairs != nil {
			cpu = r.pairs[i].Client
		}
		k := &conn{p: side.NewPumps(r.c.Size, r.o.ReadSize, cpu)}
		k.sent = k.p.SetSend(r.c.Send)
		r.cs[i] = k
		if err := r.client.Do(func() (err error) {
			k.d, err = r.tr.Dial(r.ctx, r.sss[min(i, nsrv-1)].Addr(), co)
			return err
		}); err != nil {
			if n > 1 {
				return fmt.Errorf("%s client: connection %d of %d: %w", r.tr.Name(), i+1, n, err)
			}
			return fmt.Errorf("%s client: %w", r.tr.Name(), err)
		}
		tag := -1
		if n > 1 {
			tag = i
		}
		if err := openStreams(r.ctx, r.client, k.d, k.p, r.tr.Name(), r.c.Streams, r.up(), tag); err != nil {
			return err
		}
	}
	return nil
}

// measured is what a window measured: its span, seconds and bytes, each
// connection's bytes this end received and what its senders did, at the
// window's edges.
type measured struct {
	sp     mode.Span
	secs   float64
	bytes  int64
	b0, b1 []int64
	s0, s1 map[string]float64
}

// window measures the sample's window. A window in which nothing arrived
// is measured again, up to emptyWindows times: on a machine whose CPU is
// taken away for a moment (a hypervisor's steal, a loaded CI runner) a
// short window can pass while the sender is not scheduled. A transport
// that moves nothing at all still fails, after them.
func (r *sample) window(probes []mode.Probe, dur time.Duration) (*measured, error) {
	n := len(r.cs)
	w := &measured{b0: make([]int64, n), b1: make([]int64, n)}
	for try := 1; ; try++ {
		var err error
		w.sp, err = mode.MeasureWindow(r.ctx, r.tr.Name(), probes, r.sss, dur, func(open bool) {
			b := w.b1
			if open {
				b = w.b0
			}
			for i, k := range r.cs {
				b[i] = k.p.Received()
			}
			if open {
				w.s0 = sentOf(r.cs)
			} else {
				w.s1 = sentOf(r.cs)
			}
			if r.nic != nil {
				r.nic.snapshot(open)
			}
		})
		if err == nil {
			err = sendErrOf(r.cs)
		}
		if err != nil {
			return nil, err
		}
		w.secs = w.sp.Seconds()
		w.bytes = sum(w.b1) - sum(w.b0)
		if r.up() {
			w.bytes = w.sp.S1.Received - w.sp.S0.Received
			if n > 1 && len(w.sp.S1.Tagged) == n {
				// The receivers' bytes by connection, added up: a
				// snapshot reads each server's total and its tags one
				// after the other while data flows, so the totals can
				// differ from the tags' sum by what arrived between.
				w.bytes = 0
				for i := range n {
					w.bytes += w.sp.S1.Tagged[i] - w.sp.S0.Tagged[i]
				}
			}
			if w.sp.S0.CPU != nil && w.sp.S1.CPU != nil { // the receiver's clock
				w.secs = w.sp.S1.CPU.At.Sub(w.sp.S0.CPU.At).Seconds()
			}
		}
		if w.bytes > 0 {
			return w, nil
		}
		if try == emptyWindows {
			return nil, fmt.Errorf("%s: no data arrived in %d windows of %v", r.tr.Name(), try, dur)
		}
	}
}

// figures are the mode's figures of a cell of --conns: each connection's
// bytes (counted by tag at a remote receiver), the CPU pairs, every core's
// time on both ends, and the devices' queues.
func (r *sample) figures(smp *results.Sample, w *measured) *conns.Sample {
	n := len(r.cs)
	per := make([]int64, n)
	for i := range per {
		per[i] = w.b1[i] - w.b0[i]
		if r.up() && n > 1 {
			per[i] = w.sp.S1.Tagged[i] - w.sp.S0.Tagged[i]
		} else if r.up() {
			per[i] = w.bytes
		}
	}
	var ps [][2]int
	for _, p := range r.pairs {
		ps = append(ps, [2]int{p.Client, p.Server})
	}
	var serverCores []results.CoreCPU
	busy := smp.CPU.BusyCores
	if w.sp.S0.CPU != nil && w.sp.S1.CPU != nil {
		serverCores = host.CoresBetween(*w.sp.S0.CPU, *w.sp.S1.CPU)
	}
	if smp.ServerCPU != nil {
		busy += smp.ServerCPU.BusyCores
	}
	fig := conns.Figures(per, w.secs, ps, host.CoresBetween(w.sp.C0, w.sp.C1), serverCores, busy, smp.Bps)
	if r.nic != nil {
		fig.NIC, fig.NICMissing = r.nic.result()
	}
	return fig
}
