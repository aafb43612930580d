//go:build !linux

package kquic

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"syscall"
	"time"
)

// The package off Linux: the entry points fail with an error matching
// ErrNotSupported, so no Conn, Stream or Listener can be had and their
// methods are stubs. The types that carry values (Config, errors, events)
// are the Linux ones, in the untagged files. Documentation: the Linux build.

var errNotLinux = fmt.Errorf("%w: kernel QUIC needs Linux, this is %s", ErrNotSupported, runtime.GOOS)

func opError(op string, addr netip.AddrPort) error {
	e := &net.OpError{Op: op, Net: "quic", Err: errNotLinux}
	if addr.IsValid() {
		e.Addr = net.UDPAddrFromAddrPort(addr)
	}
	return e
}

// Conn is a kernel QUIC connection; there is none off Linux.
type Conn struct{}

// Listener accepts kernel QUIC connections; there is none off Linux.
type Listener struct{}

// Stream is a QUIC stream; there is none off Linux.
type Stream struct{}

// ReceiveStream is the receiving end of the peer's unidirectional stream;
// there is none off Linux.
type ReceiveStream struct{}

// SendStream is the sending end of our unidirectional stream; there is
// none off Linux.
type SendStream struct{}

// Dial fails with ErrNotSupported off Linux.
func Dial(ctx context.Context, network, address string, cfg *Config) (*Conn, error) {
	return nil, opError("dial", netip.AddrPort{})
}

// DialAddr fails with ErrNotSupported off Linux.
func DialAddr(ctx context.Context, addr netip.AddrPort, cfg *Config) (*Conn, error) {
	return nil, opError("dial", addr)
}

// DialEarly fails with ErrNotSupported off Linux.
func DialEarly(ctx context.Context, network, address string, cfg *Config, data []byte) (*Conn, *Stream, error) {
	return nil, nil, opError("dial", netip.AddrPort{})
}

// DialAddrEarly fails with ErrNotSupported off Linux.
func DialAddrEarly(ctx context.Context, addr netip.AddrPort, cfg *Config, data []byte) (*Conn, *Stream, error) {
	return nil, nil, opError("dial", addr)
}

// Listen fails with ErrNotSupported off Linux.
func Listen(network, address string, cfg *Config) (*Listener, error) {
	return nil, opError("listen", netip.AddrPort{})
}

// Addr returns nil off Linux.
func (*Listener) Addr() net.Addr { return nil }

// AddrPort returns the zero value off Linux.
func (*Listener) AddrPort() netip.AddrPort { return netip.AddrPort{} }

// Accept returns ErrNotSupported off Linux.
func (*Listener) Accept(ctx context.Context) (*Conn, error) { return nil, ErrNotSupported }

// Close returns ErrNotSupported off Linux.
func (*Listener) Close() error { return ErrNotSupported }

// LocalAddr returns nil off Linux.
func (*Conn) LocalAddr() net.Addr { return nil }

// RemoteAddr returns nil off Linux.
func (*Conn) RemoteAddr() net.Addr { return nil }

// ConnectionState returns the zero value off Linux.
func (*Conn) ConnectionState() tls.ConnectionState { return tls.ConnectionState{} }

// Done returns a closed channel off Linux.
func (*Conn) Done() <-chan struct{} { return closedChan }

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Err returns ErrNotSupported off Linux.
func (*Conn) Err() error { return ErrNotSupported }

// SyscallConn returns ErrNotSupported off Linux.
func (*Conn) SyscallConn() (syscall.RawConn, error) { return nil, ErrNotSupported }

// Close returns ErrNotSupported off Linux.
func (*Conn) Close() error { return ErrNotSupported }

// CloseWithError returns ErrNotSupported off Linux.
func (*Conn) CloseWithError(code ApplicationErrorCode, reason string) error { return ErrNotSupported }

// AcceptStream returns ErrNotSupported off Linux.
func (*Conn) AcceptStream(ctx context.Context) (*Stream, error) { return nil, ErrNotSupported }

// AcceptUniStream returns ErrNotSupported off Linux.
func (*Conn) AcceptUniStream(ctx context.Context) (*ReceiveStream, error) {
	return nil, ErrNotSupported
}

// OpenStream returns ErrNotSupported off Linux.
func (*Conn) OpenStream() (*Stream, error) { return nil, ErrNotSupported }

// OpenUniStream returns ErrNotSupported off Linux.
func (*Conn) OpenUniStream() (*SendStream, error) { return nil, ErrNotSupported }

// OpenStreamSync returns ErrNotSupported off Linux.
func (*Conn) OpenStreamSync(ctx context.Context) (*Stream, error) { return nil, ErrNotSupported }

// OpenUniStreamSync returns ErrNotSupported off Linux.
func (*Conn) OpenUniStreamSync(ctx context.Context) (*SendStream, error) { return nil, ErrNotSupported }

// SetEventEnabled returns ErrNotSupported off Linux.
func (*Conn) SetEventEnabled(t EventType, on bool) error { return ErrNotSupported }

// SendDatagram returns ErrNotSupported off Linux.
func (*Conn) SendDatagram(b []byte) error { return ErrNotSupported }

// DatagramsDropped returns 0 off Linux.
func (*Conn) DatagramsDropped() uint64 { return 0 }

// EventsDropped returns 0 off Linux.
func (*Conn) EventsDropped() uint64 { return 0 }

// ReceiveDatagram returns ErrNotSupported off Linux.
func (*Conn) ReceiveDatagram(ctx context.Context) ([]byte, error) { return nil, ErrNotSupported }

// ReceiveEvent returns ErrNotSupported off Linux.
func (*Conn) ReceiveEvent(ctx context.Context) (Event, error) { return nil, ErrNotSupported }

// UpdateKeys returns ErrNotSupported off Linux.
func (*Conn) UpdateKeys() error { return ErrNotSupported }

// Migrate returns ErrNotSupported off Linux.
func (*Conn) Migrate(local netip.AddrPort) error { return ErrNotSupported }

// ConnectionIDs returns ErrNotSupported off Linux.
func (*Conn) ConnectionIDs(dest bool) (active, priorTo uint32, err error) {
	return 0, 0, ErrNotSupported
}

// RetireConnectionIDs returns ErrNotSupported off Linux.
func (*Conn) RetireConnectionIDs(dest bool, active, priorTo uint32) error { return ErrNotSupported }

// Token returns ErrNotSupported off Linux.
func (*Conn) Token() ([]byte, error) { return nil, ErrNotSupported }

// SendNewToken returns ErrNotSupported off Linux.
func (*Conn) SendNewToken() error { return ErrNotSupported }

// PeerTransportParameters returns ErrNotSupported off Linux.
func (*Conn) PeerTransportParameters() (TransportParameters, error) {
	return TransportParameters{}, ErrNotSupported
}

// TransportParameters returns ErrNotSupported off Linux.
func (*Conn) TransportParameters() (TransportParameters, error) {
	return TransportParameters{}, ErrNotSupported
}

// EarlyDataAccepted returns false off Linux.
func (*Conn) EarlyDataAccepted() bool { return false }

// StreamID returns 0 off Linux.
func (*Stream) StreamID() int64 { return 0 }

// Read returns ErrNotSupported off Linux.
func (*Stream) Read(p []byte) (int, error) { return 0, ErrNotSupported }

// Write returns ErrNotSupported off Linux.
func (*Stream) Write(p []byte) (int, error) { return 0, ErrNotSupported }

// Close returns ErrNotSupported off Linux.
func (*Stream) Close() error { return ErrNotSupported }

// WriteAndClose returns ErrNotSupported off Linux.
func (*Stream) WriteAndClose(p []byte) (int, error) { return 0, ErrNotSupported }

// CancelWrite returns ErrNotSupported off Linux.
func (*Stream) CancelWrite(code StreamErrorCode) error { return ErrNotSupported }

// CancelRead returns ErrNotSupported off Linux.
func (*Stream) CancelRead(code StreamErrorCode) error { return ErrNotSupported }

// SetDeadline returns ErrNotSupported off Linux.
func (*Stream) SetDeadline(t time.Time) error { return ErrNotSupported }

// SetReadDeadline returns ErrNotSupported off Linux.
func (*Stream) SetReadDeadline(t time.Time) error { return ErrNotSupported }

// SetWriteDeadline returns ErrNotSupported off Linux.
func (*Stream) SetWriteDeadline(t time.Time) error { return ErrNotSupported }

// StreamID returns 0 off Linux.
func (*ReceiveStream) StreamID() int64 { return 0 }

// Read returns ErrNotSupported off Linux.
func (*ReceiveStream) Read(p []byte) (int, error) { return 0, ErrNotSupported }

// CancelRead returns ErrNotSupported off Linux.
func (*ReceiveStream) CancelRead(code StreamErrorCode) error { return ErrNotSupported }

// SetReadDeadline returns ErrNotSupported off Linux.
func (*ReceiveStream) SetReadDeadline(t time.Time) error { return ErrNotSupported }

// StreamID returns 0 off Linux.
func (*SendStream) StreamID() int64 { return 0 }

// Write returns ErrNotSupported off Linux.
func (*SendStream) Write(p []byte) (int, error) { return 0, ErrNotSupported }

// WriteAndClose returns ErrNotSupported off Linux.
func (*SendStream) WriteAndClose(p []byte) (int, error) { return 0, ErrNotSupported }

// Close returns ErrNotSupported off Linux.
func (*SendStream) Close() error { return ErrNotSupported }

// CancelWrite returns ErrNotSupported off Linux.
func (*SendStream) CancelWrite(code StreamErrorCode) error { return ErrNotSupported }

// SetWriteDeadline returns ErrNotSupported off Linux.
func (*SendStream) SetWriteDeadline(t time.Time) error { return ErrNotSupported }

// Supported fails with ErrNotSupported off Linux.
func Supported() error { return errNotLinux }
