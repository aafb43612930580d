package ktls

import "crypto/tls"

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
