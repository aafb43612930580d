//go:build linux

package bulk

import (
	"context"
	"fmt"
	"io"
	"time"

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
	if (c.Send == send.ZeroCopy || c.Send == send.UringZC) && !env.Remote() {
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
	r := &sample{ctx: ctx, client: client, server: server, tr: tr, c: c, o: o, pairs: pairs, cs: make([]*conn, n)}
	defer r.end(&rerr)
	if err := r.listen(); err != nil {
		return results.Sample{}, err
	}
	if err := r.dial(); err != nil {
		return results.Sample{}, err
	}
	if err := mode.Sleep(ctx, warmup); err != nil {
		return results.Sample{}, err
	}
	if c.Conns > 0 {
		r.nic = newQueues(ctx, client, server)
	}
	w, err := r.window(probes, dur)
	if err != nil {
		return results.Sample{}, err
	}
	r.shutdown()
	smp := results.Sample{
		Bytes: w.bytes, Seconds: w.secs, Bps: float64(w.bytes) * 8 / w.secs,
		Streams: c.Streams, Warmup: warmup.Seconds(), Finished: time.Now().UTC(),
	}
	ends := aff
	if n > 1 {
		ends = nil // each connection's CPUs are in the mode's figures
	}
	_, isLocal := server.(side.Local)
	w.sp.Fill(&smp, w.bytes, ends, isLocal)
	if c.Send != "" && r.up() && smp.Counters != nil { // --explain: with the probes' counters
		for k, v := range w.s1 {
			smp.Counters[k] = v - w.s0[k]
		}
	}
	if c.Conns > 0 {
		smp.Payload = r.figures(&smp, w)
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
