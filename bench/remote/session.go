//go:build linux

package remote

// A session: one authenticated client's requests, answered until it
// ends or stays silent past the idle limit.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"kquic.dev/bench/counters"
	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/side"
	"kquic.dev/bench/transport"
)

// session is one authenticated client.
type session struct {
	s      *Server
	addr   netip.Addr
	sample *side.StreamServer
	// explain: count between the sample's first and second snapshot.
	explain bool
	snaps   int
	probe   counters.Probe
	// ops are the server sides of the operations modes add (ops.go)
	// that the session asked for.
	ops sessionOps
	// sampleTime is the client's sample time as it last said it (the
	// idle limit is this plus IdleMargin).
	sampleTime time.Duration
}

func (x *session) stop() error {
	x.stopOps()
	if x.probe != nil {
		x.probe.Stop()
		x.probe = nil
	}
	if x.sample == nil {
		return nil
	}
	err := x.sample.Close()
	x.sample = nil
	return err
}

// count starts the server's counters at a sample's first snapshot and
// reports them at its second.
func (x *session) count(snap *side.ServerSnapshot) {
	x.snaps++
	switch x.snaps {
	case 1:
		ends := []counters.End{{Name: "server", Ifname: x.s.dev.Name(), Do: x.s.dev.Do}}
		same, err := side.SameNetns(x.s.dev.Do)
		if err != nil {
			snap.CountersMissing = append(snap.CountersMissing, "server: "+err.Error())
			return
		}
		if !same {
			ends = append(ends, counters.End{Name: "server_process", Ifname: "lo"})
		}
		p := counters.NewProbe(counters.Options{PID: os.Getpid(), Ends: ends})
		if err := p.Start(context.Background()); err != nil {
			snap.CountersMissing = append(snap.CountersMissing, "server: "+err.Error())
			return
		}
		x.probe = p
	case 2:
		if x.probe == nil {
			return
		}
		vals, missing, err := x.probe.Stop()
		x.probe = nil
		if err != nil {
			missing = append(missing, err.Error())
		}
		snap.Counters = vals
		for _, m := range missing {
			snap.CountersMissing = append(snap.CountersMissing, "server: "+m)
		}
	}
}

// run answers requests until the connection ends, or until the client
// stays silent for longer than the idle limit: then it tells the client so
// before it returns.
func (x *session) run(c net.Conn, cd *codec) error {
	for {
		limit := x.s.idleLimit(x.sampleTime)
		x.s.mu.Lock()
		x.s.sessionIdle = limit
		x.s.mu.Unlock()
		c.SetDeadline(time.Now().Add(limit))
		var raw json.RawMessage
		if err := cd.recv(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("the client closed the connection")
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return x.cutOff(c, cd, limit)
			}
			return err
		}
		var q request
		if err := json.Unmarshal(raw, &q); err != nil {
			return fmt.Errorf("%w: %v", errNotJSON, err)
		}
		if q.SampleMS > 0 {
			x.sampleTime = time.Duration(q.SampleMS) * time.Millisecond
		}
		resp, err := x.answer(q, raw)
		if err != nil {
			return err
		}
		c.SetDeadline(time.Now().Add(limit))
		if err := cd.send(resp); err != nil {
			return err
		}
	}
}

// cutOff tells a client that stayed silent for limit that its session
// ends, and why.
func (x *session) cutOff(c net.Conn, cd *codec, limit time.Duration) error {
	why := fmt.Sprintf("no request for %v (the idle limit: %s)", limit, x.s.idleRule())
	c.SetDeadline(time.Now().Add(HandshakeTimeout))
	cd.send(response{Code: codeIdle, Error: fmt.Sprintf("the kqbench server cut this session off: %s; it stops any sample and puts %s back as it found it: connect again for a new session", why, x.s.dev.Name())})
	return errors.New("cut off: " + why)
}

// answer is the response to a request: of a registered operation, its
// op's (ops.go); of the protocol's own, handle's.
func (x *session) answer(q request, raw json.RawMessage) (any, error) {
	if t := side.RegisteredOp(q.Op); t != nil && !slices.Contains(builtinOps, q.Op) {
		return x.handleOp(t, q.Op, raw)
	}
	return x.handle(q), nil
}

func (x *session) handle(q request) response {
	fail := func(err error) response { return response{Error: err.Error()} }
	switch q.Op {
	case opPrepare:
		off, _, err := x.s.dev.Prepare(q.MTU, q.GSO)
		if err != nil {
			return fail(err)
		}
		return response{Offloads: off}
	case opListen:
		x.stop()
		tr, err := transport.Get(q.Transport)
		if err != nil {
			return fail(err)
		}
		if err := tr.Available(); err != nil {
			return fail(fmt.Errorf("%s is unavailable on the server: %w", q.Transport, err))
		}
		if q.Size <= 0 || q.Size > matrix.MaxSize {
			return fail(fmt.Errorf("message size %d: must be 1 byte to 16 MiB", q.Size))
		}
		o := transport.Options{Crypto: q.Crypto, GSO: q.GSO, NoDelay: q.NoDelay, CC: q.CC, Window: q.Window, UDPRcvBuf: q.UDPRcvBuf, ReadSize: q.ReadSize}
		var ln transport.Listener
		if err := x.s.dev.Do(func() (err error) {
			ln, err = tr.Listen(context.Background(), netip.AddrPortFrom(x.addr, 0), o)
			return err
		}); err != nil {
			return fail(fmt.Errorf("%s: listen on %v: %w", q.Transport, x.addr, err))
		}
		x.sample = side.Serve(ln, q.Size, q.ReadSize)
		x.explain, x.snaps = q.Explain, 0
		return response{Port: int(x.sample.Addr().Port())}
	case opSnapshot:
		if x.sample == nil {
			return fail(errors.New("snapshot: no sample is running (send listen first)"))
		}
		cpu, err := host.ReadCPU()
		if err != nil {
			return fail(fmt.Errorf("snapshot: CPU counters: %w", err))
		}
		snap := &side.ServerSnapshot{Received: x.sample.Received(), Tagged: x.sample.Tagged(), CPU: &cpu}
		if x.explain {
			x.count(snap)
		}
		return response{Snapshot: snap}
	case opStop:
		if err := x.stop(); err != nil {
			return fail(err)
		}
		return response{}
	case opHello:
		return fail(errors.New("hello: already said"))
	}
	return fail(fmt.Errorf("unknown operation %q", strings.TrimSpace(q.Op)))
}
