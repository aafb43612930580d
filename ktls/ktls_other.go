//go:build !linux

package ktls

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"runtime"
	"syscall"
	"time"
)

// The package off Linux: Client, Server and Dial fail with an error matching
// ErrNotSupported and ErrNoKernelTLS (Config.Fallback does not apply: there
// is no Conn here), so no Conn can be had and its methods are stubs. Config,
// ConnStats, the errors and the /proc statistics are the Linux ones, in the
// untagged files. Documentation: the Linux build.

func notLinux(op string) error {
	return fmt.Errorf("ktls: %s: %w: %w: kernel TLS needs Linux, this is %s", op, ErrNotSupported, ErrNoKernelTLS, runtime.GOOS)
}

// Conn is a kernel TLS connection; there is none off Linux.
type Conn struct{}

// Client closes conn and fails with ErrNotSupported off Linux.
func Client(ctx context.Context, conn net.Conn, config *Config) (*Conn, error) {
	conn.Close()
	return nil, notLinux("client handshake")
}

// Server closes conn and fails with ErrNotSupported off Linux.
func Server(ctx context.Context, conn net.Conn, config *Config) (*Conn, error) {
	conn.Close()
	return nil, notLinux("server handshake")
}

// Dial fails with ErrNotSupported off Linux, without connecting.
func Dial(ctx context.Context, network, address string, config *Config) (*Conn, error) {
	return nil, notLinux("dial " + address)
}

// KernelTLS returns false off Linux.
func (*Conn) KernelTLS() bool { return false }

// FallbackReason returns ErrNotSupported off Linux.
func (*Conn) FallbackReason() error { return ErrNotSupported }

// Notes returns nil off Linux.
func (*Conn) Notes() []string { return nil }

// SyscallConn returns ErrNotSupported off Linux.
func (*Conn) SyscallConn() (syscall.RawConn, error) { return nil, ErrNotSupported }

// ConnectionState returns the zero value off Linux.
func (*Conn) ConnectionState() tls.ConnectionState { return tls.ConnectionState{} }

// Stats returns the zero value off Linux.
func (*Conn) Stats() ConnStats { return ConnStats{} }

// LocalAddr returns nil off Linux.
func (*Conn) LocalAddr() net.Addr { return nil }

// RemoteAddr returns nil off Linux.
func (*Conn) RemoteAddr() net.Addr { return nil }

// SetDeadline returns ErrNotSupported off Linux.
func (*Conn) SetDeadline(t time.Time) error { return ErrNotSupported }

// SetReadDeadline returns ErrNotSupported off Linux.
func (*Conn) SetReadDeadline(t time.Time) error { return ErrNotSupported }

// SetWriteDeadline returns ErrNotSupported off Linux.
func (*Conn) SetWriteDeadline(t time.Time) error { return ErrNotSupported }

// Read returns ErrNotSupported off Linux.
func (*Conn) Read(p []byte) (int, error) { return 0, ErrNotSupported }

// Write returns ErrNotSupported off Linux.
func (*Conn) Write(p []byte) (int, error) { return 0, ErrNotSupported }

// CloseWrite returns ErrNotSupported off Linux.
func (*Conn) CloseWrite() error { return ErrNotSupported }

// Close returns ErrNotSupported off Linux.
func (*Conn) Close() error { return ErrNotSupported }

// KeyUpdate returns ErrNotSupported off Linux.
func (*Conn) KeyUpdate(requestPeer bool) error { return ErrNotSupported }

// ReadFrom returns ErrNotSupported off Linux.
func (*Conn) ReadFrom(r io.Reader) (int64, error) { return 0, ErrNotSupported }
