package kquic

import (
	"errors"
	"fmt"
	"net"

	"kquic.dev/internal/quicsock"
)

// ErrClosed is returned by operations on a connection or listener that was
// closed locally. It wraps net.ErrClosed. After [Conn.CloseWithError] the
// operations return a *CloseError with Remote false, which also matches
// ErrClosed with errors.Is. Every way a connection ends - our close, the
// peer's close ([*CloseError]), the idle timeout ([*IdleTimeoutError]), a
// failed handshake - matches net.ErrClosed.
var ErrClosed = fmt.Errorf("kquic: connection closed: %w", net.ErrClosed)

// ErrNotSupported is returned where kernel QUIC cannot be used: the kernel
// has no QUIC module loaded (the socket call's errno stays reachable with
// errors.Is), or the platform is not Linux.
var ErrNotSupported = quicsock.ErrNotSupported

// ErrStreamLimit is returned by OpenStream when the peer's stream limit is
// reached; OpenStreamSync waits instead.
var ErrStreamLimit = errors.New("kquic: the peer's stream limit is reached (use OpenStreamSync to wait)")

// ErrDatagramsDisabled is returned by SendDatagram when the peer did not
// advertise max_datagram_frame_size.
var ErrDatagramsDisabled = errors.New("kquic: the peer does not accept datagrams (it set no max_datagram_frame_size)")

// CloseError is a connection that was closed with a CONNECTION_CLOSE: by the
// peer (Remote), or by us or our kernel.
//
// Application tells an application's close (a CONNECTION_CLOSE frame of type
// 0x1d, whose ErrorCode is the application's own, such as HTTP/3's
// H3_NO_ERROR 0x100) from a transport close (type 0x1c, whose
// TransportErrorCode is a transport error of RFC 9000 §20.1 or a TLS alert
// as 0x100+alert, and FrameType the frame that caused it). The kernel's close record keeps the frame type field of a
// transport close and 0 for an application's, so a transport close that
// names no frame (frame type 0, "unknown") reads as the application's; the
// code's value is never used to guess. Codes are at most 32 bits (see
// [MaxErrorCode]).
type CloseError struct {
	Remote      bool
	Application bool
	// ErrorCode is the application's code (Application); TransportErrorCode
	// the transport's (not Application). The other is 0.
	ErrorCode          ApplicationErrorCode
	TransportErrorCode TransportErrorCode
	FrameType          uint8
	Reason             string
}

// Is makes every close match net.ErrClosed, and a close of our own
// ErrClosed.
func (e *CloseError) Is(target error) bool {
	return target == net.ErrClosed || !e.Remote && target == ErrClosed
}

// Error says who closed, with which code (and the transport error's name)
// and reason.
func (e *CloseError) Error() string {
	who := "us"
	if e.Remote {
		who = "the peer"
	}
	var s string
	if e.Application {
		s = fmt.Sprintf("kquic: connection closed by %s with application error code %#x", who, uint64(e.ErrorCode))
	} else {
		s = fmt.Sprintf("kquic: connection closed by %s with transport error %v (%#x), frame %#x", who, e.TransportErrorCode, uint64(e.TransportErrorCode), e.FrameType)
	}
	if e.Reason != "" {
		s += fmt.Sprintf(": %q", e.Reason)
	}
	return s
}

// IdleTimeoutError is a connection the kernel closed after its idle timeout.
type IdleTimeoutError struct{}

// Error says the idle timeout ended the connection.
func (*IdleTimeoutError) Error() string {
	return "kquic: connection closed: idle timeout (no packet from the peer within max_idle_timeout)"
}

// Timeout reports true: the error is a timeout (net.Error).
func (*IdleTimeoutError) Timeout() bool { return true }

// Temporary reports false.
func (*IdleTimeoutError) Temporary() bool { return false }

// Is makes the idle timeout match net.ErrClosed: the connection has ended.
func (*IdleTimeoutError) Is(target error) bool { return target == net.ErrClosed }

// StreamError is a stream the peer reset (RESET_STREAM, on Read) or asked us
// to stop sending on (STOP_SENDING, on Write), or that we cancelled.
type StreamError struct {
	StreamID  int64
	ErrorCode StreamErrorCode
	Remote    bool
}

// Error names the stream, who reset it and the code.
func (e *StreamError) Error() string {
	who := "locally"
	if e.Remote {
		who = "by the peer"
	}
	return fmt.Sprintf("kquic: stream %d was reset %s with code %#x", e.StreamID, who, uint64(e.ErrorCode))
}

// DatagramTooLargeError is a datagram over the largest size the connection
// can send in one packet. Max is a size that fits a packet of the peer's
// max_datagram_frame_size (the kernel counts the packet's header and tag
// against that limit); a smaller path MTU can lower the real limit further.
type DatagramTooLargeError struct {
	Size, Max int
}

// Error gives the size and the limit.
func (e *DatagramTooLargeError) Error() string {
	if e.Max > 0 {
		return fmt.Sprintf("kquic: datagram of %d bytes is over the connection's limit of %d", e.Size, e.Max)
	}
	return fmt.Sprintf("kquic: datagram of %d bytes does not fit in one packet", e.Size)
}
