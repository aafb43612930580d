// Package transport puts the transports that kqbench compares behind one
// small interface: kernel QUIC (through package kquic), kernel TLS (package
// ktls), plain TCP and userspace QUIC (quic-go). Each says whether it can run
// on this machine and why not; each carries one or more byte streams between
// a client and a server, which is all the benchmark engine needs.
package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strings"
)

// Options are the knobs of one benchmark cell that a transport applies.
type Options struct {
	// Crypto false asks for the transport's unencrypted mode (kernel QUIC's
	// disable_1rtt_encryption). Transports without one report it in
	// Support.
	Crypto bool
	// GSO false asks the transport not to use segmentation offload where it
	// controls that itself (quic-go); the device side is the topology's job.
	GSO bool
	// KeyLog, if set, receives the TLS secrets (SSLKEYLOGFILE format).
	KeyLog io.Writer
	// NoDelay asks the transport to send each write at once rather than
	// hold a small one back while data is in flight: TCP_NODELAY, which Go
	// sets on every TCP socket, and kernel QUIC's stream_data_nodelay. rr
	// mode sets it; otherwise a response of more than one packet waits for
	// the peer's delayed ACK.
	NoDelay bool
	// PeerCert is the certificate (DER) a client trusts: in two-host mode
	// the peer's benchmark certificate (see Certificate); nil trusts this
	// process's own.
	PeerCert []byte
	// CC names the congestion control ("reno", "cubic", "bbr"; "" for the
	// default): TCP_CONGESTION for TCP and kTLS, the module's config for
	// kernel QUIC. Support says where it does not apply.
	CC string
	// Window, if positive, is the flow-control window (bytes) of each
	// stream and of the connection, for the QUIC transports; 0 keeps their
	// defaults (see FlowWindow).
	Window int
	// UDPRcvBuf, if positive, is the receive buffer (SO_RCVBUF, bytes) of
	// quic-go's UDP sockets, set after quic-go has raised it to what it
	// wants: a receiver whose buffer overflows, to show RcvbufErrors.
	UDPRcvBuf int
	// ReadSize, if positive, is how many bytes a benchmark's receiver
	// asks for in each read (iperf3 reads -l bytes); 0 reads the message
	// size or 64 KiB, whichever is larger.
	ReadSize int
}

// Listener accepts the server side of benchmark streams.
type Listener interface {
	// Accept returns the next stream a client opened.
	Accept(ctx context.Context) (io.ReadWriteCloser, error)
	Addr() netip.AddrPort
	Close() error
}

// Dialer opens benchmark streams to a listener: each call opens a stream,
// on a new connection or a shared one as the transport does best.
type Dialer interface {
	Open(ctx context.Context) (io.ReadWriteCloser, error)
	Close() error
}

// Transport is one way of moving bytes between two hosts.
type Transport interface {
	// Name is the transport's name on the command line ("kquic").
	Name() string
	// Available reports why the transport cannot run here, or nil.
	Available() error
	// Support says whether the transport can run with the options, and
	// what they mean for it (for the report), or why they do not apply.
	Support(o Options) (ok bool, note string)
	// Listen starts a server on addr (port 0 picks one) in the calling
	// goroutine's network namespace.
	Listen(ctx context.Context, addr netip.AddrPort, o Options) (Listener, error)
	// Dial prepares a client of the server at addr.
	Dial(ctx context.Context, addr netip.AddrPort, o Options) (Dialer, error)
}

var registry = map[string]Transport{}

func register(t Transport) { registry[t.Name()] = t }

// nativeOnly are the transports only the native driver measures: C stacks
// this process has no binding to (ngtcp2).
var nativeOnly = map[string]Transport{}

// ErrNativeOnly is what such a transport's Available says: only the
// native driver measures it (a cell of this process's is n/a).
var ErrNativeOnly = errors.New("only the native driver measures it (--driver native)")

// NativeOnly lists the transports only the native driver measures, which
// Names leaves out (a run without --transports does not take them).
func NativeOnly() []string {
	var n []string
	for k := range nativeOnly {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Names lists the known transports in a stable order: this process's
// (see NativeOnly for the others).
func Names() []string {
	order := map[string]int{"kquic": 0, "ktls": 1, "tcp": 2, "quic-go": 3}
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Slice(n, func(i, j int) bool { return order[n[i]] < order[n[j]] })
	return n
}

// Get returns the transport of that name.
func Get(name string) (Transport, error) {
	t, ok := registry[name]
	if !ok {
		t, ok = nativeOnly[name]
	}
	if !ok {
		return nil, fmt.Errorf("unknown transport %q (known: %s)", name, strings.Join(append(Names(), NativeOnly()...), ", "))
	}
	return t, nil
}
