package kquic

import (
	"fmt"

	"kquic.dev/internal/quicabi"
)

// ApplicationErrorCode is an application's code for closing a connection
// (a CONNECTION_CLOSE frame of type 0x1d), as quic-go's: HTTP/3's
// H3_NO_ERROR is 0x100, for example.
type ApplicationErrorCode uint64

// StreamErrorCode is an application's code for abandoning a stream
// (RESET_STREAM, STOP_SENDING), as quic-go's.
type StreamErrorCode uint64

// TransportErrorCode is a QUIC transport error code (RFC 9000 §20.1): the
// code of a CONNECTION_CLOSE frame of type 0x1c, which the QUIC stack sends,
// not the application. Codes 0x100-0x1ff carry a TLS alert (CRYPTO_ERROR,
// RFC 9001 §4.8).
type TransportErrorCode uint64

// MaxErrorCode is the largest error code of any kind the kernel QUIC module
// carries: its socket options and events hold codes in 32 bits, where QUIC's
// frames allow 62. [Conn.CloseWithError], [Stream.CancelRead] and
// [Stream.CancelWrite] refuse a larger code with an error matching
// ErrCodeTooLarge, and send nothing. A peer's larger code reaches this side
// as the kernel stores it, cut to its low 32 bits.
const MaxErrorCode = 1<<32 - 1

// ErrCodeTooLarge is matched by the error of a call given an error code
// above MaxErrorCode.
var ErrCodeTooLarge = fmt.Errorf("the kernel QUIC module carries error codes of up to 32 bits (at most %#x)", uint64(MaxErrorCode))

// The transport error codes of RFC 9000 §20.1 and RFC 9368 §10.2.
const (
	NoError                   = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_NONE)
	InternalError             = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_INTERNAL)
	ConnectionRefused         = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_CONNECTION_REFUSED)
	FlowControlError          = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_FLOW_CONTROL)
	StreamLimitError          = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_STREAM_LIMIT)
	StreamStateError          = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_STREAM_STATE)
	FinalSizeError            = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_FINAL_SIZE)
	FrameEncodingError        = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_FRAME_ENCODING)
	TransportParameterError   = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_TRANSPORT_PARAM)
	ConnectionIDLimitError    = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_CONNECTION_ID_LIMIT)
	ProtocolViolation         = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_PROTOCOL_VIOLATION)
	InvalidToken              = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_INVALID_TOKEN)
	ApplicationErrorErrorCode = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_APPLICATION) // APPLICATION_ERROR: a close during the handshake
	CryptoBufferExceeded      = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_CRYPTO_BUF_EXCEEDED)
	KeyUpdateError            = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_KEY_UPDATE)
	AEADLimitReached          = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_AEAD_LIMIT_REACHED)
	NoViablePath              = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_NO_VIABLE_PATH)
	VersionNegotiationError   = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_VERSION_NEGOTIATION)
	// CryptoError is the first of the 256 codes 0x100+alert that carry a
	// TLS alert; see [TransportErrorCode.TLSAlert].
	CryptoError = TransportErrorCode(quicabi.QUIC_TRANSPORT_ERROR_CRYPTO)
)

// String returns the code's RFC name, such as "FLOW_CONTROL_ERROR" or
// "CRYPTO_ERROR(alert 120: no application protocol)", or "0x" and the code
// in hex for a code with no name.
func (c TransportErrorCode) String() string { return quicabi.TransportErrorName(uint64(c)) }

// TLSAlert returns the TLS alert a CRYPTO_ERROR carries (code 0x100+alert),
// and false for other codes.
func (c TransportErrorCode) TLSAlert() (uint8, bool) {
	if c >= CryptoError && c <= CryptoError+0xff {
		return uint8(c - CryptoError), true
	}
	return 0, false
}

// kernelCode checks that a code fits the kernel's 32 bits; what names the
// call, for the error.
func kernelCode[T ~uint64](what string, code T) (uint32, error) {
	if uint64(code) > MaxErrorCode {
		return 0, fmt.Errorf("kquic: %s with error code %#x: %w; nothing was sent", what, uint64(code), ErrCodeTooLarge)
	}
	return uint32(code), nil
}
