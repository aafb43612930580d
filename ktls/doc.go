// Package ktls runs a TLS handshake with crypto/tls on a TCP connection, then
// hands record encryption and decryption to the kernel (kernel TLS: the "tls"
// TCP upper layer protocol with TLS_TX and TLS_RX keys) and returns a
// net.Conn whose Read and Write are plain read and write system calls, and
// whose ReadFrom sends files with sendfile(2) without copying them through
// user space.
//
//	conn, err := net.Dial("tcp", "example.net:443")
//	...
//	c, err := ktls.Client(ctx, conn, &ktls.Config{TLS: &tls.Config{ServerName: "example.net"}})
//	if err != nil {
//		return err // says why: handshake, no kernel TLS, unsupported cipher
//	}
//	defer c.Close()
//	io.Copy(c, file) // sendfile: encrypted in the kernel, straight from the page cache
//
// TLS 1.3 with AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305 and TLS 1.2
// with the same AEADs are handed over. Anything else (or a kernel without the
// TLS module) is an error wrapping ErrUnsupportedCipher or ErrNoKernelTLS,
// unless Config.Fallback keeps the connection in userspace crypto/tls.
//
// # The switch
//
// Three things must be exact for the kernel to continue where crypto/tls
// stopped:
//
//   - No byte may be consumed past the handshake. crypto/tls reads greedily,
//     so the handshake runs on a wrapper whose Read never crosses a record
//     boundary (records.go). When the handshake returns, application data the
//     peer sent in the same segment as its Finished, and NewSessionTickets,
//     are still in the socket for the kernel. The switch also checks that
//     crypto/tls holds no buffered bytes.
//   - The keys. Secrets come from tls.Config.KeyLogWriter (the user's own
//     writer, if set, still gets every line): the TLS 1.3 application traffic
//     secrets, expanded with HKDF-Expand-Label "key" and "iv", or the TLS 1.2
//     master secret, expanded with the PRF into the key block; the server
//     random that expansion needs is read from the plaintext ServerHello as it
//     passes through the wrapper.
//   - The record sequence numbers. A Go TLS 1.3 server has already sent
//     NewSessionTickets under its application key, a TLS 1.2 side has sent
//     or received Finished under the new keys. Counting records from outside
//     cannot tell TLS 1.3 handshake records from application records, so the
//     numbers are read from crypto/tls's own state with reflect (read only, no
//     unsafe), isolated in tlsstate.go with a test that fails loudly if a Go
//     release moves the fields. This is exact for any peer and any number of
//     tickets.
//
// # After the switch
//
// Read uses recvmsg and the TLS_GET_RECORD_TYPE cmsg, so records that are not
// application data are seen rather than failing the read: a NewSessionTicket
// is counted and dropped; a TLS 1.3 KeyUpdate installs the next receive key
// (kernels since 6.14 pause decryption until it is set) and, if the peer asks,
// is answered; close_notify is io.EOF; any other alert is an *AlertError.
// KeyUpdate starts an update of the send key. On kernels that cannot rekey,
// both give an error wrapping ErrKeyUpdateUnsupported.
//
// ReadStats reads the kernel's counters from /proc/net/tls_stat.
package ktls
