// Package conformance checks that a QUIC implementation gives the answers
// RFC 9000 requires to a peer that breaks its rules. Each Rule is one MUST
// (or SHOULD, or MAY, as labelled) of RFC 9000 §§4, 7, 12, 13, 17-19 that
// ends a connection: the frames or transport parameters that break it, and
// the error code the RFC requires in CONNECTION_CLOSE. The runner plays the
// hostile peer with internal/quicpeer (a real handshake, then the violation
// under the connection's real keys) against a Target in the role the rule
// needs, and records what the target answered: the error code, the frame
// type named in CONNECTION_CLOSE, or nothing.
//
// Targets are quic-go (any system) and kernel QUIC through the kquic
// package (Linux with the module loaded). The same table against quic-go
// shows the harness is right where quic-go is.
package conformance
