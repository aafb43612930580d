//go:build !linux

package handshake

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"runtime"
)

// The package off Linux: Client, ClientEarly and Server fail with an error
// matching ErrNotSupported, so no Session can be had and its methods are
// stubs. The errors are the Linux ones (errors.go). Documentation: the
// Linux build.

var errNotLinux = fmt.Errorf("QUIC handshake: %w: kernel QUIC needs Linux, this is %s", ErrNotSupported, runtime.GOOS)

// Session is a completed handshake; there is none off Linux.
type Session struct {
	// RejectedEarlyData says the server refused the client's 0-RTT data.
	RejectedEarlyData bool
}

// Client fails with ErrNotSupported off Linux.
func Client(ctx context.Context, f *os.File, cfg *tls.Config) (*Session, error) {
	return nil, errNotLinux
}

// ClientEarly fails with ErrNotSupported off Linux.
func ClientEarly(ctx context.Context, f *os.File, cfg *tls.Config, early func() error) (*Session, error) {
	return nil, errNotLinux
}

// Server fails with ErrNotSupported off Linux.
func Server(ctx context.Context, f *os.File, cfg *tls.Config) (*Session, error) {
	return nil, errNotLinux
}

// ServerEarly fails with ErrNotSupported off Linux.
func ServerEarly(ctx context.Context, f *os.File, cfg *tls.Config, allowEarly bool) (*Session, error) {
	return nil, errNotLinux
}

// ConnectionState returns the zero value off Linux.
func (*Session) ConnectionState() tls.ConnectionState { return tls.ConnectionState{} }

// Close returns ErrNotSupported off Linux.
func (*Session) Close() error { return ErrNotSupported }

// EarlyDataAccepted returns false off Linux.
func (*Session) EarlyDataAccepted() bool { return false }

// HandleTicket returns ErrNotSupported off Linux.
func (*Session) HandleTicket(nst []byte) error { return ErrNotSupported }

// SendSessionTicket returns ErrNotSupported off Linux.
func (*Session) SendSessionTicket(earlyData bool) error { return ErrNotSupported }

// CloseMarker is "" off Linux.
func (s *Session) CloseMarker() string { return "" }

// ClearCloseMarker does nothing off Linux.
func (s *Session) ClearCloseMarker() {}
