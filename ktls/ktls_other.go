//go:build !linux

package ktls

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"runtime"
	"time"
)

// This file is the package on platforms other than Linux: the same API, so
// that code written against it builds anywhere, with no kernel TLS behind
// it. Client, Server and Dial return an error matching ErrNotSupported and
// ErrNoKernelTLS (Config.Fallback does not apply: there is no Conn here), so
// no Conn can be had and its methods only return ErrNotSupported or zero
// values.

// notLinux is the error of the entry points here.
func notLinux(op string) error {
	return fmt.Errorf("ktls: %s: %w: %w: kernel TLS needs Linux, this is %s", op, ErrNotSupported, ErrNoKernelTLS, runtime.GOOS)
}

// Conn is a TLS connection whose records the kernel encrypts and decrypts.
// Read and Write are plain read and write system calls on the TCP socket;
// ReadFrom sends files with sendfile. In userspace fallback (see
// Config.Fallback) every method goes through crypto/tls instead.
//
// Read and Write may be called concurrently with each other, as for
// net.Conn; concurrent Reads (or Writes) are serialised.
type Conn struct{}

// ConnStats counts the records a kernel TLS Conn handled itself.
type ConnStats struct {
	// NewSessionTickets is how many TLS 1.3 NewSessionTicket messages were
	// received after the switch (and ignored: sessions are not resumed).
	NewSessionTickets uint64
	// KeyUpdatesReceived and KeyUpdatesSent count TLS 1.3 KeyUpdates.
	KeyUpdatesReceived, KeyUpdatesSent uint64
	// ControlRecords is how many non-application-data records (or parts of
	// records) Read got from the kernel.
	ControlRecords uint64
}

// Config configures a kernel TLS connection.
type Config struct {
	// TLS configures the handshake, as for crypto/tls. It must not be nil.
	// Its KeyLogWriter, if any, still receives every secret.
	TLS *tls.Config

	// Fallback, when set, keeps the connection when the kernel cannot take
	// the keys (no TLS ULP, a cipher suite the kernel lacks): the returned
	// Conn then encrypts in userspace with crypto/tls on the same TCP
	// connection, KernelTLS reports false and FallbackReason says why.
	// Without it, Client and Server return the error and close the
	// connection.
	Fallback bool

	// ZeroCopySendfile sets TLS_TX_ZEROCOPY_RO: with device offload the NIC
	// reads sendfile data straight from the page cache. The file must not
	// change while it is being sent, or the peer sees a bad record MAC.
	// Ignored by kernels without the option.
	ZeroCopySendfile bool

	// ExpectNoPad sets TLS_RX_EXPECT_NO_PAD on TLS 1.3 connections: the
	// kernel decrypts straight into the reader's buffer, assuming the peer
	// does not pad records (Go, OpenSSL and the kernel do not). A padded
	// record is still handled, by a slower retry. Ignored by kernels without
	// the option.
	ExpectNoPad bool
}

// KernelTLS reports whether the kernel does the record layer (false in
// userspace fallback).
//
// Not on Linux: it returns the zero value.
func (c *Conn) KernelTLS() bool {
	return false
}

// FallbackReason is why the connection stayed in userspace, or nil.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) FallbackReason() error {
	return ErrNotSupported
}

// Notes lists optional kernel features that were asked for but not set.
//
// Not on Linux: it returns the zero value.
func (c *Conn) Notes() []string {
	return nil
}

// ConnectionState returns the handshake's outcome.
//
// Not on Linux: it returns the zero value.
func (c *Conn) ConnectionState() tls.ConnectionState {
	return tls.ConnectionState{}
}

// Stats returns the connection's control record counters.
//
// Not on Linux: it returns the zero value.
func (c *Conn) Stats() ConnStats {
	return ConnStats{}
}

// LocalAddr returns the local network address.
//
// Not on Linux: it returns the zero value.
func (c *Conn) LocalAddr() net.Addr {
	return nil
}

// RemoteAddr returns the remote network address.
//
// Not on Linux: it returns the zero value.
func (c *Conn) RemoteAddr() net.Addr {
	return nil
}

// SetDeadline sets the read and write deadlines.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) SetDeadline(t time.Time) error {
	return ErrNotSupported
}

// SetReadDeadline sets the read deadline.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) SetReadDeadline(t time.Time) error {
	return ErrNotSupported
}

// SetWriteDeadline sets the write deadline.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return ErrNotSupported
}

// Read reads application data.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) Read(p []byte) (int, error) {
	return 0, ErrNotSupported
}

// Write writes application data; the kernel cuts it into records.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) Write(p []byte) (int, error) {
	return 0, ErrNotSupported
}

// CloseWrite sends close_notify and shuts down the sending side of the TCP
// connection; the peer reads io.EOF, and Read keeps working.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) CloseWrite() error {
	return ErrNotSupported
}

// Close sends close_notify (unless a write is blocked, or within 5 seconds)
// and closes the connection.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) Close() error {
	return ErrNotSupported
}

// Client runs a TLS client handshake on conn, which must be a *net.TCPConn,
// then hands the record layer to the kernel. On error conn is closed.
//
// Not on Linux: it closes conn and returns an error matching ErrNotSupported.
func Client(ctx context.Context, conn net.Conn, config *Config) (*Conn, error) {
	conn.Close()
	return nil, notLinux("client handshake")
}

// Server runs a TLS server handshake on conn, which must be a *net.TCPConn,
// then hands the record layer to the kernel. On error conn is closed.
//
// Not on Linux: it closes conn and returns an error matching ErrNotSupported.
func Server(ctx context.Context, conn net.Conn, config *Config) (*Conn, error) {
	conn.Close()
	return nil, notLinux("server handshake")
}

// Dial connects to address over TCP and runs Client on the connection.
//
// Not on Linux: it returns an error matching ErrNotSupported without
// connecting.
func Dial(ctx context.Context, network, address string, config *Config) (*Conn, error) {
	return nil, notLinux("dial " + address)
}

// KeyUpdate sends a TLS 1.3 KeyUpdate and moves the send side to the next
// traffic key.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) KeyUpdate(requestPeer bool) error {
	return ErrNotSupported
}

// ReadFrom implements io.ReaderFrom, so io.Copy(conn, file) sends with
// sendfile(2): the kernel reads the file from the page cache and encrypts it
// into records without the data passing through user space.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	return 0, ErrNotSupported
}
