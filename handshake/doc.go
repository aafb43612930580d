// Package handshake runs the TLS 1.3 handshake of a kernel QUIC connection in
// userspace with crypto/tls's QUIC API: handshake messages travel over the
// socket with sendmsg/recvmsg and a control message naming the encryption
// level, and the secrets go to the kernel by setsockopt.
//
// The package is being written (see the project's open issues).
package handshake
