//go:build !linux

package handshake

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
)

// This file is the package on platforms other than Linux: the same API, so
// that code written against it builds anywhere, with no kernel QUIC behind
// it. Client, ClientEarly and Server return an error matching
// ErrNotSupported, so no Session can be had and its methods only return
// ErrNotSupported or zero values.

// errNotLinux is the error of every entry point here.
var errNotLinux = fmt.Errorf("QUIC handshake: %w: kernel QUIC needs Linux, this is %s", ErrNotSupported, runtime.GOOS)

// ErrTimeout is wrapped by errors of handshakes whose context ended.
var ErrTimeout = errors.New("handshake did not complete in time")

// PeerClosedError is a handshake the peer ended: it closed the connection,
// for example because it rejected our certificate or ALPN list. The kernel
// does not carry TLS alerts, so the code is usually APPLICATION_ERROR (0x0c)
// or a CRYPTO_ERROR (0x100 + alert).
type PeerClosedError struct {
	// Code is the transport or application error code of the close; Frame
	// the frame type that caused a transport error; Phrase the reason.
	Code   uint32
	Frame  uint8
	Phrase string
}

// Error is a failed handshake: Op says which step failed.
type Error struct {
	Op  string
	Err error
}

// Session is a completed handshake. It stays usable for the messages that
// follow the handshake: the server's session tickets, which the client
// processes with [Session.HandleTicket].
type Session struct {
	// RejectedEarlyData says the server refused the client's 0-RTT data.
	RejectedEarlyData bool
}

// Error describes the close. (On Linux it also names the transport error.)
func (e *PeerClosedError) Error() string {
	s := fmt.Sprintf("the peer closed the connection during the handshake (code %#x", e.Code)
	if e.Phrase != "" {
		s += fmt.Sprintf(", reason %q", e.Phrase)
	}
	return s + "): it may have rejected our certificate, server name or ALPN list"
}

// Error names the step and the cause.
func (e *Error) Error() string {
	return "QUIC handshake: " + e.Op + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error {
	return e.Err
}

// Is makes a failed handshake match net.ErrClosed, as every other way a
// connection ends does.
func (e *Error) Is(target error) bool {
	return target == net.ErrClosed
}

// Timeout reports whether the handshake failed because its context ended
// (as net.Error does).
func (e *Error) Timeout() bool {
	return errors.Is(e.Err, ErrTimeout)
}

// ConnectionState reports the negotiated TLS parameters (version, cipher
// suite, ALPN, peer certificates, resumption).
//
// Not on Linux: it returns the zero value.
func (s *Session) ConnectionState() tls.ConnectionState {
	return tls.ConnectionState{}
}

// Close releases the TLS state.
//
// Not on Linux: it returns ErrNotSupported.
func (s *Session) Close() error {
	return ErrNotSupported
}

// Client runs the client side of the handshake on f, a non-blocking QUIC
// socket that has been connect()ed.
//
// Not on Linux: it returns an error matching ErrNotSupported.
func Client(ctx context.Context, f *os.File, cfg *tls.Config) (*Session, error) {
	return nil, errNotLinux
}

// ClientEarly is [Client] with 0-RTT.
//
// Not on Linux: it returns an error matching ErrNotSupported.
func ClientEarly(ctx context.Context, f *os.File, cfg *tls.Config, early func() error) (*Session, error) {
	return nil, errNotLinux
}

// Server runs the server side of the handshake on f, a non-blocking QUIC
// socket returned by accept().
//
// Not on Linux: it returns an error matching ErrNotSupported.
func Server(ctx context.Context, f *os.File, cfg *tls.Config) (*Session, error) {
	return nil, errNotLinux
}

// EarlyDataAccepted reports whether 0-RTT was used: on a client, that it sent
// 0-RTT data (see [ClientEarly]) and the server accepted it; on a server,
// that it accepted the client's 0-RTT data (the kernel delivers that data
// once the handshake has completed).
//
// Not on Linux: it returns the zero value.
func (s *Session) EarlyDataAccepted() bool {
	return false
}

// HandleTicket gives the client a NewSessionTicket message that the kernel
// received after the handshake (event NEW_SESSION_TICKET, or
// getsockopt(SESSION_TICKET)), so crypto/tls stores the session in the
// tls.Config's ClientSessionCache.
//
// Not on Linux: it returns ErrNotSupported.
func (s *Session) HandleTicket(nst []byte) error {
	return ErrNotSupported
}

// SendSessionTicket makes the server send a NewSessionTicket (at the
// application level), allowing 0-RTT on resumption if earlyData is set.
//
// Not on Linux: it returns ErrNotSupported.
func (s *Session) SendSessionTicket(earlyData bool) error {
	return ErrNotSupported
}
