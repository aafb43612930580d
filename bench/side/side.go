//go:build linux

// Package side is the two ends of a kqbench sample and the wire protocol
// between them: the client's device (ClientSide), the server (ServerSide:
// the single-host topology's server namespace, Local, or a kqbench server
// on a peer, package bench/remote), and the stream server that sinks,
// sends or answers on every stream it accepts (StreamServer).
package side

import (
	"context"
	"fmt"
	"net/netip"
	"syscall"

	"kquic.dev/bench/host"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// ClientSide is the end of a benchmark that opens the streams: the client
// namespace of the single-host topology, or this host's device in two-host
// mode (a *topo.Device is one).
type ClientSide interface {
	// Prepare applies a cell's MTU and segmentation offload to the client's
	// device and returns its state and what GSO on or off meant.
	Prepare(mtu int, gso bool) (offloads, gsoNote string, err error)
	// Do runs fn where the client's sockets belong (its network namespace).
	Do(fn func() error) error
}

// ServerSide is the end of a benchmark that accepts the streams: the server
// namespace of the single-host topology, or a kqbench server on a peer
// (package bench/remote).
type ServerSide interface {
	// Prepare applies a cell's MTU and segmentation offload to the server's
	// device and returns its state, for the record.
	Prepare(ctx context.Context, mtu int, gso bool) (offloads string, err error)
	// Available reports why the transport cannot run on the server, or nil.
	Available(transport string) error
	// Certificate is the benchmark certificate (DER) the server's TLS
	// transports present, or nil when they present this process's own.
	Certificate() []byte
	// Listen starts the server of one sample: it accepts streams, reads
	// each one's direction marker, and sinks or sends messages of size
	// bytes.
	Listen(ctx context.Context, transport string, o transport.Options, size int) (ServerSample, error)
}

// Caller is a server end on another host that answers the operations
// modes add to the control protocol (RegisterOp; bench/remote's Client).
type Caller interface {
	// Call sends op with the fields of args, and decodes the answer's
	// into answer.
	Call(ctx context.Context, op string, args, answer any) error
	// PeerAddr is the server's address the control connection reaches,
	// where a client of the server's dials.
	PeerAddr() netip.Addr
}

// ServerSample is the server end of one sample.
type ServerSample interface {
	// Addr is the address the client dials.
	Addr() netip.AddrPort
	// Snapshot reads the bytes the server received so far and, for a
	// server on another host, that host's CPU counters.
	Snapshot(ctx context.Context) (ServerSnapshot, error)
	// Stop closes the listener and every stream, and says whether they
	// stopped.
	Stop(ctx context.Context) error
}

// ServerSnapshot is what a ServerSample reports at the start and the end of
// the measured window.
type ServerSnapshot struct {
	// Received counts the bytes the server read (the goodput of direction
	// up).
	Received int64 `json:"received"`
	// Tagged counts the bytes of the tagged streams (MarkTagged) by tag,
	// the connections of a cell of several; nil for none.
	Tagged map[int]int64 `json:"tagged,omitempty"`
	// CPU is the server host's counters; nil when the server shares the
	// client's host, whose CPU the sample records already.
	CPU *host.CPUSnapshot `json:"cpu,omitempty"`
	// Counters are the server's --explain counters, in the snapshot that
	// ends the measured window, and CountersMissing those it could not
	// count.
	Counters        map[string]float64 `json:"counters,omitempty"`
	CountersMissing []string           `json:"counters_missing,omitempty"`
}

// Local is the server namespace of the single-host topology T; its streams
// run on CPU (-1: anywhere).
type Local struct {
	T   *topo.Topology
	CPU int
}

// Prepare applies the MTU and GSO setting to the server's device.
func (s Local) Prepare(_ context.Context, mtu int, gso bool) (string, error) {
	off, _, err := s.T.ServerDevice().Prepare(mtu, gso)
	return off, err
}

// Available: every transport of this process runs in the local server.
func (Local) Available(string) error { return nil }

// Certificate is nil: the local server presents this process's own.
func (Local) Certificate() []byte { return nil }

// Listen starts a StreamServer in the server namespace.
func (s Local) Listen(ctx context.Context, name string, o transport.Options, size int) (ServerSample, error) {
	tr, err := transport.Get(name)
	if err != nil {
		return nil, err
	}
	var ln transport.Listener
	if err := s.T.Server.Do(func() (err error) {
		ln, err = tr.Listen(ctx, netip.AddrPortFrom(topo.ServerAddr, 0), o)
		return err
	}); err != nil {
		return nil, err
	}
	return localSample{ServeOn(ln, size, o.ReadSize, s.CPU)}, nil
}

type localSample struct{ s *StreamServer }

func (l localSample) Addr() netip.AddrPort { return l.s.Addr() }
func (l localSample) Snapshot(context.Context) (ServerSnapshot, error) {
	return ServerSnapshot{Received: l.s.Received(), Tagged: l.s.Tagged()}, nil
}
func (l localSample) Stop(context.Context) error { return l.s.Close() }

// SameNetns reports whether do runs functions in this thread's network
// namespace (then counting both would count the same syscalls twice). An
// error says which check failed: neither answer is known then.
func SameNetns(do func(fn func() error) error) (bool, error) {
	ino := func() (uint64, error) {
		var st syscall.Stat_t
		if err := syscall.Stat("/proc/thread-self/ns/net", &st); err != nil {
			return 0, fmt.Errorf("network namespace: %w", err)
		}
		return st.Ino, nil
	}
	var inside uint64
	if err := do(func() (err error) { inside, err = ino(); return err }); err != nil {
		return false, fmt.Errorf("network namespace of the device's end: %w", err)
	}
	here, err := ino()
	if err != nil {
		return false, err
	}
	return inside == here, nil
}
