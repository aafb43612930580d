// Package kquic is the Go interface to the Linux kernel QUIC module
// (lxin/quic, IPPROTO_QUIC sockets): dialing and listening, streams as
// io.ReadWriteClosers, datagrams, events, transport parameters, key update,
// migration and close codes, with the descriptors in Go's runtime poller and
// no cgo. The TLS handshake that a kernel QUIC connection needs runs in
// package kquic.dev/handshake.
//
// The bindings are being written (see the project's open issues); the kernel
// ABI they build on is in kquic.dev/internal/quicabi.
package kquic
