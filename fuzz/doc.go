// Package fuzz is a stateful packet fuzzer for QUIC implementations, kernel
// QUIC above all. It speaks enough QUIC to get past the handshake
// (internal/quicpeer), then sends generated inputs under the connection's
// real keys, so they reach the frame parser; other inputs go before the
// handshake, as Initial packets protected with keys derived from a
// connection ID of the fuzzer's choice.
//
// Inputs come from a seed: frame-aware ones (valid frames with edge values:
// varint limits, offsets near 2^62, stream IDs past limits, overlapping and
// reversed ACK ranges, Retire Prior To above the sequence number, huge CRYPTO
// offsets) and byte-level mutations of them (of headers, lengths, tokens and
// coalescing for the Initials). Every input is logged, as plaintext and
// packet type, before it is sent, so a finding replays under new keys
// (Replay).
//
// The oracles: the kernel log (BUG:, WARNING:, Oops, KASAN:, ...), liveness
// (a fresh handshake after every batch), leaks (the module's sockets and slab
// objects return to where they started once every connection is closed, and
// the module unloads), and, from the host, a guest that dies.
//
// [RunVM] is the host's side of a run in a guest: a kernel-log or guest
// finding is narrowed, in fresh guests, to the shortest tail of inputs that
// brings it back, and written as a [Reproducer] directory, which the
// package's TestReproducers replays as a Go test. With a KCOV kernel the
// guest traces the module's coverage (kquic.dev/kmod/kcov) and the host maps
// it to the module's functions and lines for the report.
package fuzz
