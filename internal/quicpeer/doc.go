// Package quicpeer is a minimal QUIC endpoint for tests and tools that must
// say things a well-behaved stack never says. It completes a real TLS 1.3
// handshake with crypto/tls's QUIC API (tls.QUICConn) over a UDP socket, as a
// client or a server, acknowledges what it receives, and then sends whatever
// frames its caller gives it, in any packet number space, protected with the
// connection's real keys, or any datagram at all.
//
// It has none of a stack's machinery beyond that: no flow control, no
// congestion control and no loss recovery but the retransmission of its
// handshake data. Every packet it receives is kept, decrypted and decoded,
// for the caller to judge what the peer answered.
//
// Everything is driven by the caller's goroutine: a Conn is not safe for
// concurrent use.
package quicpeer
