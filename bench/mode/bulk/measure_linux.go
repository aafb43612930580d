//go:build linux

package bulk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"kquic.dev/bench/mode/bulk/conns"
	"sync"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/send"
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

// Check is the transport's check (mode.CheckTransport), then the send
// method's: n/a where the transport or the kernel has none, by name, and
// for a downward cell (the method is the client's, which sends up).
func (m Mode) Check(env *mode.Env, c matrix.Cell) (results.Status, string) {
	st, note := m.Common.Check(env, c)
	if st != "" || c.Send == "" {
		return st, note
	}
	if why := send.NA(c.Transport, c.Send); why != "" {
		return results.StatusNA, why
	}
	if c.Direction == matrix.Down {
		return results.StatusNA, c.Send + ": the send method is the client's, and the server sends down (it writes)"
	}
	if c.Send == send.ZeroCopy && !env.Remote() {
		note = joinNote(note, send.CopiedNote)
	}
	return "", note
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// Summary is the goodput's median, the samples and the spread.
func (Mode) Summary(r *results.CellResult) string {
	return mode.GoodputSummary(r)
}

// Measure measures one sample of a cell between the two sides: the server
// listens, the client dials and opens the streams, and after the warmup
// the receiver's byte count and both hosts' CPU are read at the start and
// the end of the window (the streams pinned as aff says; nil: not pinned).
//
// A cell of several connections (Cell.Conns) dials them side by side,
// each with the cell's streams, each pinned to its pair of CPUs
// (matrix.Affinity.ForConns): the single-host topology gives each
// connection a server of its own, pinned to its server CPU; a server on
// another host serves them all and counts each connection's bytes under
// its tag (side.MarkTagged). Its sample carries the mode's figures
// (conns.Sample: each connection's goodput, the fairness, every CPU's time).
func Measure(ctx context.Context, client side.ClientSide, server side.ServerSide, tr transport.Transport, c matrix.Cell, o transport.Options, aff *matrix.Affinity, warmup, dur time.Duration, probes []mode.Probe) (_ results.Sample, rerr error) {
	ctx, cancel := context.WithTimeout(ctx, warmup+dur+60*time.Second)
	defer cancel()
	n := ConnsOf(c)
	pairs, err := aff.ForConns(n)
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s: %w", tr.Name(), err)
	}
	local, isLocal := server.(side.Local)
	nsrv := 1
	if isLocal && n > 1 {
		nsrv = n
	}
	var (
		sss      servers
		cs       = make([]*conn, n)
		stopOnce sync.Once
		stopErr  error
	)
	shutdown := func() {
		for _, k := range cs {
			if k == nil {
				continue
			}
			if k.d != nil {
				k.p.Close(k.d)
			} else {
				k.p.Close()
			}
		}
		stopOnce.Do(func() {
			sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
			defer scancel()
			for _, ss := range sss {
				stopErr = errors.Join(stopErr, ss.Stop(sctx))
			}
		})
	}
	defer func() {
		shutdown()
		var errs []error
		for _, k := range cs {
			if k != nil {
				errs = append(errs, k.p.Wait(tr.Name()))
			}
		}
		if rerr == nil {
			rerr = errors.Join(append(errs, stopErr)...)
		}
	}()
	for i := 0; i < nsrv; i++ {
		srv := server
		if nsrv > 1 && pairs != nil {
			l := local
			l.CPU = pairs[i].Server
			srv = l
		}
		ss, err := srv.Listen(ctx, tr.Name(), o, c.Size)
		if err != nil {
			return results.Sample{}, fmt.Errorf("%s server: %w", tr.Name(), err)
		}
		sss = append(sss, ss)
	}
	co := o
	co.PeerCert = server.Certificate()
	up := c.Direction != matrix.Down
	for i := range cs {
		cpu := -1
		if pairs != nil {
			cpu = pairs[i].Client
		}
		k := &conn{p: side.NewPumps(c.Size, o.ReadSize, cpu)}
		k.sent = k.p.SetSend(c.Send)
		cs[i] = k
		if err := client.Do(func() (err error) {
			k.d, err = tr.Dial(ctx, sss[min(i, nsrv-1)].Addr(), co)
			return err
		}); err != nil {
			if n > 1 {
				return results.Sample{}, fmt.Errorf("%s client: connection %d of %d: %w", tr.Name(), i+1, n, err)
			}
			return results.Sample{}, fmt.Errorf("%s client: %w", tr.Name(), err)
		}
		tag := -1
		if n > 1 {
			tag = i
		}
		if err := openStreams(ctx, client, k.d, k.p, tr.Name(), c.Streams, up, tag); err != nil {
			return results.Sample{}, err
		}
	}

	if err := mode.Sleep(ctx, warmup); err != nil {
		return results.Sample{}, err
	}
	var nic *queues
	if c.Conns > 0 {
		nic = newQueues(ctx, client, server)
	}
	var (
		sp     mode.Span
		secs   float64
		bytes  int64
		b0, b1 = make([]int64, n), make([]int64, n) // each connection's bytes this end received, at the edges
		s0, s1 map[string]float64                   // what its senders did (--send), at the edges
	)
	// A window in which nothing arrived is measured again, up to
	// emptyWindows times: on a machine whose CPU is taken away for a
	// moment (a hypervisor's steal, a loaded CI runner) a short window can
	// pass while the sender is not scheduled. A transport that moves
	// nothing at all still fails, after them.
	for try := 1; ; try++ {
		sp, err = mode.MeasureWindow(ctx, tr.Name(), probes, sss, dur, func(open bool) {
			b := b1
			if open {
				b = b0
			}
			for i, k := range cs {
				b[i] = k.p.Received()
			}
			if open {
				s0 = sentOf(cs)
			} else {
				s1 = sentOf(cs)
			}
			if nic != nil {
				nic.snapshot(open)
			}
		})
		if err == nil {
			err = sendErrOf(cs)
		}
		if err != nil {
			return results.Sample{}, err
		}
		secs = sp.Seconds()
		bytes = sum(b1) - sum(b0)
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
	ends := aff
	if n > 1 {
		ends = nil // each connection's CPUs are in the mode's figures
	}
	sp.Fill(&smp, bytes, ends, isLocal)
	if c.Send != "" && up && smp.Counters != nil { // --explain: with the probes' counters
		for k, v := range s1 {
			smp.Counters[k] = v - s0[k]
		}
	}
	if c.Conns > 0 {
		per := make([]int64, n)
		for i := range per {
			per[i] = b1[i] - b0[i]
			if up && n > 1 {
				per[i] = sp.S1.Tagged[i] - sp.S0.Tagged[i]
			} else if up {
				per[i] = bytes
			}
		}
		var ps [][2]int
		for _, p := range pairs {
			ps = append(ps, [2]int{p.Client, p.Server})
		}
		var serverCores []results.CoreCPU
		busy := smp.CPU.BusyCores
		if sp.S0.CPU != nil && sp.S1.CPU != nil {
			serverCores = host.CoresBetween(*sp.S0.CPU, *sp.S1.CPU)
		}
		if smp.ServerCPU != nil {
			busy += smp.ServerCPU.BusyCores
		}
		fig := conns.Figures(per, secs, ps, host.CoresBetween(sp.C0, sp.C1), serverCores, busy, smp.Bps)
		if nic != nil {
			fig.NIC, fig.NICMissing = nic.result()
		}
		smp.Payload = fig
	}
	return smp, nil
}

// conn is one connection of a sample and its streams' pumps, and what
// their senders did (--send).
type conn struct {
	d    transport.Dialer
	p    *side.Pumps
	sent *send.Counters
}

// sentOf is what the connections' senders did, added up.
func sentOf(cs []*conn) map[string]float64 {
	var out map[string]float64
	for _, k := range cs {
		if k == nil {
			continue
		}
		for name, v := range k.sent.Map() {
			if out == nil {
				out = map[string]float64{}
			}
			out[name] += v
		}
	}
	return out
}

// sendErrOf is the first sender's failure of the connections, or nil.
func sendErrOf(cs []*conn) error {
	for _, k := range cs {
		if k != nil {
			if err := k.p.SendErr(); err != nil {
				return err
			}
		}
	}
	return nil
}

// servers are the server ends of a sample's connections, snapshot as one:
// the bytes summed, each tag's summed, the first one's CPU and counters
// (they are on one host).
type servers []side.ServerSample

func (ss servers) Snapshot(ctx context.Context) (side.ServerSnapshot, error) {
	var out side.ServerSnapshot
	for i, s := range ss {
		snap, err := s.Snapshot(ctx)
		if err != nil {
			return out, err
		}
		if i == 0 {
			out = snap
			out.Tagged = nil
		} else {
			out.Received += snap.Received
		}
		for t, v := range snap.Tagged {
			if out.Tagged == nil {
				out.Tagged = map[int]int64{}
			}
			out.Tagged[t] += v
		}
	}
	return out, nil
}

func sum(v []int64) int64 {
	var t int64
	for _, x := range v {
		t += x
	}
	return t
}

// openStreams opens n streams on d from the client's namespace, writes
// each one's direction marker (sending with a tag: counted under it too,
// side.MarkTagged; -1: none) and starts its pump.
func openStreams(ctx context.Context, client side.ClientSide, d transport.Dialer, p *side.Pumps, name string, n int, up bool, tag int) error {
	mark := []byte{side.MarkUp}
	switch {
	case !up:
		mark = []byte{side.MarkDown}
	case tag >= 0:
		mark = side.TaggedMarker(tag)
	}
	for i := 0; i < n; i++ {
		var s io.ReadWriteCloser
		if err := client.Do(func() (err error) {
			s, err = d.Open(ctx)
			return err
		}); err != nil {
			return fmt.Errorf("%s: open stream %d: %w", name, i, err)
		}
		if _, err := s.Write(mark); err != nil {
			s.Close()
			return fmt.Errorf("%s: stream %d: %w", name, i, err)
		}
		p.Start(s, up)
	}
	return nil
}
