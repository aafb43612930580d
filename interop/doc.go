// Package interop runs the quic-interop-runner's test cases between QUIC
// implementations, each pair in both roles, and judges every case from what
// crossed the wire, as the runner does, not from the endpoints' word.
//
// Between client and server sits a relay of its own (sim.go), the part the
// runner gives to an ns-3 simulator: it forwards UDP datagrams on loopback,
// drops, corrupts, delays, blackholes and rebinds them as a case asks, and
// keeps every datagram. With the TLS key log of the ends, the trace
// (trace.go) decrypts every packet with internal/quicwire and a case's
// checks read it: a Retry and its token, key phases, versions, cipher
// suites, certificates in resumed handshakes, 0-RTT data, path validation,
// bytes sent before address validation. The files must arrive whole too.
//
// Implementations sit behind Impl: this project's bindings over kernel QUIC
// (kquic), quic-go, quicnet/http3, Debian's ngtcp2 programs, and the
// module's own http3_test (kquic-c).
package interop
