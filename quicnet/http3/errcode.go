package http3

import (
	"errors"
	"fmt"

	"kquic.dev/quicnet"
)

// ErrCode is an HTTP/3 error code (RFC 9114 §8.1, RFC 9204 §6), carried by
// a stream reset (RESET_STREAM, STOP_SENDING) or a connection close.
type ErrCode uint64

// The error codes of RFC 9114 §8.1, RFC 9204 §6 and RFC 9297 §5.2.
const (
	ErrCodeNoError                  ErrCode = 0x100
	ErrCodeGeneralProtocolError     ErrCode = 0x101
	ErrCodeInternalError            ErrCode = 0x102
	ErrCodeStreamCreationError      ErrCode = 0x103
	ErrCodeClosedCriticalStream     ErrCode = 0x104
	ErrCodeFrameUnexpected          ErrCode = 0x105
	ErrCodeFrameError               ErrCode = 0x106
	ErrCodeExcessiveLoad            ErrCode = 0x107
	ErrCodeIDError                  ErrCode = 0x108
	ErrCodeSettingsError            ErrCode = 0x109
	ErrCodeMissingSettings          ErrCode = 0x10a
	ErrCodeRequestRejected          ErrCode = 0x10b
	ErrCodeRequestCanceled          ErrCode = 0x10c
	ErrCodeRequestIncomplete        ErrCode = 0x10d
	ErrCodeMessageError             ErrCode = 0x10e
	ErrCodeConnectError             ErrCode = 0x10f
	ErrCodeVersionFallback          ErrCode = 0x110
	ErrCodeQPACKDecompressionFailed ErrCode = 0x200
	ErrCodeQPACKEncoderStreamError  ErrCode = 0x201
	ErrCodeQPACKDecoderStreamError  ErrCode = 0x202
	ErrCodeDatagramError            ErrCode = 0x33
)

var errCodeNames = map[ErrCode]string{
	ErrCodeNoError:                  "H3_NO_ERROR",
	ErrCodeGeneralProtocolError:     "H3_GENERAL_PROTOCOL_ERROR",
	ErrCodeInternalError:            "H3_INTERNAL_ERROR",
	ErrCodeStreamCreationError:      "H3_STREAM_CREATION_ERROR",
	ErrCodeClosedCriticalStream:     "H3_CLOSED_CRITICAL_STREAM",
	ErrCodeFrameUnexpected:          "H3_FRAME_UNEXPECTED",
	ErrCodeFrameError:               "H3_FRAME_ERROR",
	ErrCodeExcessiveLoad:            "H3_EXCESSIVE_LOAD",
	ErrCodeIDError:                  "H3_ID_ERROR",
	ErrCodeSettingsError:            "H3_SETTINGS_ERROR",
	ErrCodeMissingSettings:          "H3_MISSING_SETTINGS",
	ErrCodeRequestRejected:          "H3_REQUEST_REJECTED",
	ErrCodeRequestCanceled:          "H3_REQUEST_CANCELLED",
	ErrCodeRequestIncomplete:        "H3_REQUEST_INCOMPLETE",
	ErrCodeMessageError:             "H3_MESSAGE_ERROR",
	ErrCodeConnectError:             "H3_CONNECT_ERROR",
	ErrCodeVersionFallback:          "H3_VERSION_FALLBACK",
	ErrCodeQPACKDecompressionFailed: "QPACK_DECOMPRESSION_FAILED",
	ErrCodeQPACKEncoderStreamError:  "QPACK_ENCODER_STREAM_ERROR",
	ErrCodeQPACKDecoderStreamError:  "QPACK_DECODER_STREAM_ERROR",
	ErrCodeDatagramError:            "H3_DATAGRAM_ERROR",
}

// String names the code ("H3_REQUEST_CANCELLED"), or gives its number.
func (e ErrCode) String() string {
	if s, ok := errCodeNames[e]; ok {
		return s
	}
	return fmt.Sprintf("H3 error %#x", uint64(e))
}

// Error is an HTTP/3 error: a stream reset or a connection closed with an
// HTTP/3 code, by the peer (Remote) or by this side. RoundTrip, the bodies
// of requests and responses and a handler's writes return it, wrapping the
// *quicnet.StreamError or *quicnet.ApplicationError that carried it; a
// connection error matches net.ErrClosed.
type Error struct {
	Remote       bool
	ErrorCode    ErrCode
	ErrorMessage string

	err error
}

// Error describes the error: the code, who sent it and the reason.
func (e *Error) Error() string {
	s := "http3: " + e.ErrorCode.String()
	if e.Remote {
		s += " from the peer"
	} else {
		s += " (local)"
	}
	if e.ErrorMessage != "" {
		s += ": " + e.ErrorMessage
	}
	return s
}

// Unwrap returns the QUIC error that carried the code.
func (e *Error) Unwrap() error { return e.err }

// Is matches an *Error with the same code and Remote.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.ErrorCode == e.ErrorCode && t.Remote == e.Remote
}

// wrapError turns a quicnet stream or application error into an *Error,
// keeping other errors as they are.
func wrapError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*Error](err); ok {
		return err
	}
	if se, ok := errors.AsType[*quicnet.StreamError](err); ok {
		return &Error{Remote: se.Remote, ErrorCode: ErrCode(se.ErrorCode), err: err}
	}
	if ae, ok := errors.AsType[*quicnet.ApplicationError](err); ok {
		return &Error{Remote: ae.Remote, ErrorCode: ErrCode(ae.ErrorCode), ErrorMessage: ae.ErrorMessage, err: err}
	}
	return err
}

// connError is a protocol violation that ends the connection: the
// connection is closed with Code.
type connError struct {
	Code ErrCode
	Msg  string
}

func (e *connError) Error() string { return "http3: " + e.Code.String() + ": " + e.Msg }

// streamError is a protocol violation that ends one request: its stream is
// reset with Code.
type streamError struct {
	Code ErrCode
	Msg  string
}

func (e *streamError) Error() string { return "http3: " + e.Code.String() + ": " + e.Msg }
