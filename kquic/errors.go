package kquic

import (
	"errors"
	"fmt"
	"net"

	"kquic.dev/internal/quicabi"
)

// ErrClosed is returned by operations on a connection or listener that was
// closed locally. It wraps net.ErrClosed. After [Conn.CloseWithError] the
// operations return a *CloseError with Remote false, which also matches
// ErrClosed with errors.Is.
var ErrClosed = fmt.Errorf("kquic: connection closed: %w", net.ErrClosed)

// ErrStreamLimit is returned by OpenStream when the peer's stream limit is
// reached; OpenStreamSync waits instead.
var ErrStreamLimit = errors.New("kquic: the peer's stream limit is reached (use OpenStreamSync to wait)")

// ErrDatagramsDisabled is returned by SendDatagram when the peer did not
// advertise max_datagram_frame_size.
var ErrDatagramsDisabled = errors.New("kquic: the peer does not accept datagrams (it set no max_datagram_frame_size)")

// CloseError is a connection that was closed with a CONNECTION_CLOSE: by the
// peer (Remote), or by us or our kernel. Code is the application's error code
// for an application close, or a transport error code (RFC 9000 §20.1) for a
// protocol error, in which case FrameType names the frame that caused it.
// The kernel's close record does not say which of the two kinds a close was;
// a non-zero FrameType marks a transport error.
type CloseError struct {
	Remote    bool
	Code      uint64
	FrameType uint8
	Reason    string
}

// Is makes a close of our own match ErrClosed (and so net.ErrClosed).
func (e *CloseError) Is(target error) bool {
	return !e.Remote && (target == ErrClosed || target == net.ErrClosed)
}

func (e *CloseError) Error() string {
	who := "us"
	if e.Remote {
		who = "the peer"
	}
	s := fmt.Sprintf("kquic: connection closed by %s with error code %#x", who, e.Code)
	if e.FrameType != 0 || e.Code >= quicabi.QUIC_TRANSPORT_ERROR_CRYPTO {
		s += fmt.Sprintf(" (transport error %s, frame %#x)", quicabi.TransportErrorName(uint32(e.Code)), e.FrameType)
	}
	if e.Reason != "" {
		s += fmt.Sprintf(": %q", e.Reason)
	}
	return s
}

// IdleTimeoutError is a connection the kernel closed after its idle timeout.
type IdleTimeoutError struct{}

func (*IdleTimeoutError) Error() string {
	return "kquic: connection closed: idle timeout (no packet from the peer within max_idle_timeout)"
}

// Timeout reports true: the error is a timeout (net.Error).
func (*IdleTimeoutError) Timeout() bool { return true }

// Temporary reports false.
func (*IdleTimeoutError) Temporary() bool { return false }

// StreamError is a stream the peer reset (RESET_STREAM, on Read) or asked us
// to stop sending on (STOP_SENDING, on Write), or that we cancelled.
type StreamError struct {
	StreamID int64
	Code     uint64
	Remote   bool
}

func (e *StreamError) Error() string {
	who := "locally"
	if e.Remote {
		who = "by the peer"
	}
	return fmt.Sprintf("kquic: stream %d was reset %s with code %#x", e.StreamID, who, e.Code)
}

// DatagramTooLargeError is a datagram over the largest size the connection
// can send in one packet. Max is a size that fits a packet of the peer's
// max_datagram_frame_size (the kernel counts the packet's header and tag
// against that limit); a smaller path MTU can lower the real limit further.
type DatagramTooLargeError struct {
	Size, Max int
}

func (e *DatagramTooLargeError) Error() string {
	if e.Max > 0 {
		return fmt.Sprintf("kquic: datagram of %d bytes is over the connection's limit of %d", e.Size, e.Max)
	}
	return fmt.Sprintf("kquic: datagram of %d bytes does not fit in one packet", e.Size)
}

// closeError makes the error of a connection from the kernel's close record:
// all zero means the idle timer (or a stateless reset without a code) ended
// it.
func closeError(cc quicabi.ConnectionClose, remote bool) error {
	if cc.ErrCode == 0 && cc.Frame == 0 && cc.Phrase == "" && !remote {
		return &IdleTimeoutError{}
	}
	return &CloseError{Remote: remote, Code: uint64(cc.ErrCode), FrameType: cc.Frame, Reason: cc.Phrase}
}
