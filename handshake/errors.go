package handshake

import (
	"errors"
	"fmt"
	"net"

	"kquic.dev/internal/quicabi"
)

// CloseMarkerPrefix begins the phrase of [Session.CloseMarker]: what a peer
// reads as the reason of a CONNECTION_CLOSE our kernel sent on its own.
const CloseMarkerPrefix = "closed by the kernel's QUIC stack (kquic "

// ErrTimeout is wrapped by errors of handshakes whose context ended.
var ErrTimeout = errors.New("handshake did not complete in time")

// PeerClosedError is a handshake the peer ended: it closed the connection,
// for example because it rejected our certificate or ALPN list. The kernel
// does not carry TLS alerts, so the code is usually APPLICATION_ERROR (0x0c)
// or a CRYPTO_ERROR (0x100 + alert).
type PeerClosedError struct {
	// Code is the transport or application error code of the close; Frame
	// the frame type that caused a transport error; Phrase the reason.
	Code   uint32
	Frame  uint8
	Phrase string
}

// Error names the close's code (and the transport error's name) and
// reason.
func (e *PeerClosedError) Error() string {
	s := fmt.Sprintf("the peer closed the connection during the handshake (code %#x %s", e.Code, quicabi.TransportErrorName(uint64(e.Code)))
	if e.Phrase != "" {
		s += fmt.Sprintf(", reason %q", e.Phrase)
	}
	return s + "): it may have rejected our certificate, server name or ALPN list"
}

// LocalCloseError is a handshake our own kernel ended: it closed the
// connection itself, on a protocol error it found in the peer's packets or
// transport parameters (Code, and Frame, the frame type at fault), and sent
// the peer a CONNECTION_CLOSE with that code; or, Code and Frame zero, it
// ended the connection with no CONNECTION_CLOSE from either side (its idle
// timer, a stateless reset from the peer).
type LocalCloseError struct {
	Code  uint32
	Frame uint8
}

// Error names the close's code and frame type, and says our kernel closed.
func (e *LocalCloseError) Error() string {
	if e.Code == 0 && e.Frame == 0 {
		return "our kernel ended the connection during the handshake, with no CONNECTION_CLOSE from the peer: its idle timer ran out, or the peer sent a stateless reset"
	}
	s := fmt.Sprintf("our kernel closed the connection during the handshake (code %#x %s", e.Code, quicabi.TransportErrorName(uint64(e.Code)))
	if e.Frame != 0 {
		s += fmt.Sprintf(", frame type %#x", e.Frame)
	}
	return s + "), not the peer: it found the peer's packets or transport parameters in error and sent the peer that CONNECTION_CLOSE"
}

// Error is a failed handshake: Op says which step failed.
type Error struct {
	Op  string
	Err error
}

// Error names the step and the cause.
func (e *Error) Error() string { return "QUIC handshake: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes a failed handshake match net.ErrClosed, as every other way a
// connection ends does.
func (e *Error) Is(target error) bool { return target == net.ErrClosed }

// Timeout reports whether the handshake failed because its context ended
// (as net.Error does).
func (e *Error) Timeout() bool { return errors.Is(e.Err, ErrTimeout) }
