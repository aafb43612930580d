// Package handshake runs the TLS 1.3 handshake of a kernel QUIC connection in
// userspace with crypto/tls's QUIC API, as the kernel QUIC module expects of
// its users: handshake messages travel over the socket with sendmsg/recvmsg
// and a control message naming the encryption level, the secrets go to the
// kernel with setsockopt (and are wiped from memory once it has them), and the
// transport parameters are exchanged through the kernel, which encodes and
// checks them.
//
// Package kquic calls it for every connection; use it directly on a socket
// you manage yourself:
//
//	sess, err := handshake.Client(ctx, f, &tls.Config{ServerName: "example.com", NextProtos: []string{"h3"}})
//
// where f is an *os.File of a non-blocking IPPROTO_QUIC socket that has been
// connect()ed (or, for [Server], accept()ed).
//
// Certificate verification is crypto/tls's and on by default; client
// certificates, SNI, ALPN, session resumption and key logging
// (tls.Config.KeyLogWriter, SSLKEYLOGFILE format) are configured there too.
package handshake
