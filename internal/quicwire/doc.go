// Package quicwire is a QUIC packet toolkit for tests and tools: variable-length
// integers, every RFC 9000 frame type and DATAGRAM (RFC 9221) with encode and
// decode, long and short headers for QUIC v1 and v2 (RFC 9369), coalesced
// packets, Initial secrets from the destination connection ID (RFC 9001 §5.2),
// packet and header protection for AES-GCM and ChaCha20-Poly1305, key updates
// and the Retry integrity tag.
//
// It is deliberately permissive where a stack is strict: a decoder accepts
// what the wire format allows and leaves protocol checks (stream states, flow
// control, limits) to the caller, and an encoder writes any value it is given,
// so a conformance test or a fuzzer can build the violations it needs. Errors
// wrap ErrMalformed, so callers can tell a truncated or over-long encoding from
// other failures.
//
// The package has no build tag: the capture checks decrypt with it on any
// system.
package quicwire
