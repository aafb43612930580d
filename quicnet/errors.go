package quicnet

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
)

// ApplicationErrorCode is an application's code for closing a connection
// (CONNECTION_CLOSE of type 0x1d).
type ApplicationErrorCode uint64

// StreamErrorCode is an application's code for abandoning a stream
// (RESET_STREAM, STOP_SENDING).
type StreamErrorCode uint64

// TransportErrorCode is a QUIC transport error code (RFC 9000 §20.1); codes
// 0x100-0x1ff are TLS alerts (CRYPTO_ERROR).
type TransportErrorCode uint64

// StreamID is a stream's ID; its two low bits give the stream's type
// (RFC 9000 §2.1).
type StreamID int64

// ErrServerClosed is returned by [Listener.Accept] once the listener is
// closed. It matches net.ErrClosed with errors.Is.
var ErrServerClosed error = serverClosedError{}

type serverClosedError struct{}

func (serverClosedError) Error() string { return "quicnet: server closed" }
func (serverClosedError) Unwrap() error { return net.ErrClosed }

// ErrDatagramsDisabled is returned by [Conn.SendDatagram] when the peer did
// not turn datagrams on, and by [Conn.ReceiveDatagram] when this side did
// not (Config.EnableDatagrams).
var ErrDatagramsDisabled = errors.New("quicnet: datagrams are not enabled on this connection (set Config.EnableDatagrams on both sides)")

// ApplicationError is a connection closed by an application, with
// [Conn.CloseWithError]: by the peer (Remote) or by this side.
type ApplicationError struct {
	Remote       bool
	ErrorCode    ApplicationErrorCode
	ErrorMessage string

	err error // the implementation's error
}

// Error describes the close: who closed, the code and the reason.
func (e *ApplicationError) Error() string {
	s := fmt.Sprintf("quicnet: connection closed by %s with application error %#x", who(e.Remote), uint64(e.ErrorCode))
	if e.ErrorMessage != "" {
		s += fmt.Sprintf(": %q", e.ErrorMessage)
	}
	return s
}

// Unwrap returns the implementation's error (*quic.ApplicationError or
// *kquic.CloseError).
func (e *ApplicationError) Unwrap() error { return e.err }

// Is matches net.ErrClosed, and an *ApplicationError with the same code
// and Remote.
func (e *ApplicationError) Is(target error) bool {
	if target == net.ErrClosed {
		return true
	}
	t, ok := target.(*ApplicationError)
	return ok && t.ErrorCode == e.ErrorCode && t.Remote == e.Remote
}

// TransportError is a connection closed for a protocol error (RFC 9000
// §20.1), or a handshake that failed on a TLS alert (CRYPTO_ERROR: codes
// 0x100 + alert), reported by the peer (Remote) or found by this side.
type TransportError struct {
	Remote       bool
	ErrorCode    TransportErrorCode
	FrameType    uint64
	ErrorMessage string

	err error // the implementation's error
}

// Error describes the error: its code, who found it, and the reason.
func (e *TransportError) Error() string {
	if e.ErrorMessage == "" && e.err != nil {
		return "quicnet: " + e.err.Error() // it has the details (a TLS error)
	}
	s := fmt.Sprintf("quicnet: transport error %s (%s)", e.ErrorCode, who(e.Remote))
	if e.FrameType != 0 {
		s += fmt.Sprintf(", frame type %#x", e.FrameType)
	}
	if e.ErrorMessage != "" {
		s += ": " + e.ErrorMessage
	}
	return s
}

// Unwrap returns the implementation's error.
func (e *TransportError) Unwrap() error { return e.err }

// Is matches net.ErrClosed, and a *TransportError with the same code,
// frame type and Remote.
func (e *TransportError) Is(target error) bool {
	if target == net.ErrClosed {
		return true
	}
	t, ok := target.(*TransportError)
	return ok && t.ErrorCode == e.ErrorCode && t.FrameType == e.FrameType && t.Remote == e.Remote
}

// IdleTimeoutError is a connection closed because nothing arrived from the
// peer for the idle timeout ([Config.MaxIdleTimeout]). It is a net.Error
// whose Timeout is true.
type IdleTimeoutError struct {
	err error // the implementation's error
}

// Error says that the idle timeout ended the connection.
func (e *IdleTimeoutError) Error() string {
	return "quicnet: connection closed: idle timeout (no recent network activity)"
}

// Unwrap returns the implementation's error.
func (e *IdleTimeoutError) Unwrap() error { return e.err }

// Is matches net.ErrClosed.
func (e *IdleTimeoutError) Is(target error) bool { return target == net.ErrClosed }

// Timeout reports true.
func (*IdleTimeoutError) Timeout() bool { return true }

// Temporary reports false.
func (*IdleTimeoutError) Temporary() bool { return false }

// HandshakeTimeoutError is a handshake that did not complete within
// [Config.HandshakeTimeout] or the deadline of the Dial's context (it then
// matches context.DeadlineExceeded). It is a net.Error whose Timeout is
// true.
//
// A kernel QUIC listener drops a ClientHello whose ALPN list it does not
// serve, so against a kernel QUIC server a wrong ALPN gives this error
// (whose message says so) rather than a *TransportError.
type HandshakeTimeoutError struct {
	err error // the implementation's error
}

// Error says that the handshake timed out, and the implementation's
// explanation.
func (e *HandshakeTimeoutError) Error() string {
	if e.err == nil {
		return "quicnet: handshake did not complete in time"
	}
	return "quicnet: handshake did not complete in time: " + e.err.Error()
}

// Unwrap returns the implementation's error.
func (e *HandshakeTimeoutError) Unwrap() error { return e.err }

// Is matches net.ErrClosed.
func (e *HandshakeTimeoutError) Is(target error) bool { return target == net.ErrClosed }

// Timeout reports true.
func (*HandshakeTimeoutError) Timeout() bool { return true }

// Temporary reports false.
func (*HandshakeTimeoutError) Temporary() bool { return false }

// StreamError is a stream abandoned with an application's code: Read
// returns it after the peer's RESET_STREAM (Remote) or after this side's
// CancelRead, Write after the peer's STOP_SENDING (Remote) or after this
// side's CancelWrite.
type StreamError struct {
	StreamID  StreamID
	ErrorCode StreamErrorCode
	Remote    bool

	err error // the implementation's error
}

// Error describes the cancellation: stream, who canceled, code.
func (e *StreamError) Error() string {
	return fmt.Sprintf("quicnet: stream %d canceled by %s with error code %#x", int64(e.StreamID), who(e.Remote), uint64(e.ErrorCode))
}

// Unwrap returns the implementation's error.
func (e *StreamError) Unwrap() error { return e.err }

// Is matches a *StreamError with the same stream, code and Remote.
func (e *StreamError) Is(target error) bool {
	t, ok := target.(*StreamError)
	return ok && t.StreamID == e.StreamID && t.ErrorCode == e.ErrorCode && t.Remote == e.Remote
}

// StreamLimitReachedError is returned by [Conn.OpenStream] and
// [Conn.OpenUniStream] when the peer allows no more streams for now; the
// Sync variants wait instead.
type StreamLimitReachedError struct {
	err error // the implementation's error
}

// Error says that the peer allows no more streams for now.
func (e *StreamLimitReachedError) Error() string {
	return "quicnet: too many open streams (the peer's limit is reached; OpenStreamSync waits)"
}

// Unwrap returns the implementation's error.
func (e *StreamLimitReachedError) Unwrap() error { return e.err }

// DatagramTooLargeError is returned by [Conn.SendDatagram] for a datagram
// that does not fit in one packet. MaxDatagramPayloadSize is the largest
// that would have fitted, or 0 where the implementation cannot tell.
type DatagramTooLargeError struct {
	MaxDatagramPayloadSize int64

	err error // the implementation's error
}

// Error says how large a datagram may be, where known.
func (e *DatagramTooLargeError) Error() string {
	if e.MaxDatagramPayloadSize > 0 {
		return fmt.Sprintf("quicnet: datagram too large (at most %d bytes)", e.MaxDatagramPayloadSize)
	}
	return "quicnet: datagram too large for one packet"
}

// Unwrap returns the implementation's error.
func (e *DatagramTooLargeError) Unwrap() error { return e.err }

func who(remote bool) string {
	if remote {
		return "the peer"
	}
	return "this side"
}

var transportErrorNames = [...]string{
	0x00: "NO_ERROR",
	0x01: "INTERNAL_ERROR",
	0x02: "CONNECTION_REFUSED",
	0x03: "FLOW_CONTROL_ERROR",
	0x04: "STREAM_LIMIT_ERROR",
	0x05: "STREAM_STATE_ERROR",
	0x06: "FINAL_SIZE_ERROR",
	0x07: "FRAME_ENCODING_ERROR",
	0x08: "TRANSPORT_PARAMETER_ERROR",
	0x09: "CONNECTION_ID_LIMIT_ERROR",
	0x0a: "PROTOCOL_VIOLATION",
	0x0b: "INVALID_TOKEN",
	0x0c: "APPLICATION_ERROR",
	0x0d: "CRYPTO_BUFFER_EXCEEDED",
	0x0e: "KEY_UPDATE_ERROR",
	0x0f: "AEAD_LIMIT_REACHED",
	0x10: "NO_VIABLE_PATH",
}

// String names the code: "PROTOCOL_VIOLATION",
// "CRYPTO_ERROR 0x178 (tls: no application protocol)", or the number.
func (c TransportErrorCode) String() string {
	switch {
	case c < TransportErrorCode(len(transportErrorNames)):
		return transportErrorNames[c]
	case c >= 0x100 && c <= 0x1ff:
		return fmt.Sprintf("CRYPTO_ERROR %#x (%v)", uint64(c), tls.AlertError(c-0x100))
	}
	return fmt.Sprintf("%#x", uint64(c))
}

// isConverted reports whether err is already one of this package's errors.
func isConverted(err error) bool {
	switch err.(type) {
	case *ApplicationError, *TransportError, *IdleTimeoutError, *HandshakeTimeoutError,
		*StreamError, *StreamLimitReachedError, *DatagramTooLargeError:
		return true
	}
	return err == ErrServerClosed || err == ErrDatagramsDisabled
}
