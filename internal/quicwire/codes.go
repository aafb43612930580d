package quicwire

import "fmt"

// TransportError is a transport error code of CONNECTION_CLOSE type 0x1c
// (RFC 9000 §20.1).
type TransportError uint64

// Transport error codes.
const (
	NoError                 TransportError = 0x00
	InternalError           TransportError = 0x01
	ConnectionRefused       TransportError = 0x02
	FlowControlError        TransportError = 0x03
	StreamLimitError        TransportError = 0x04
	StreamStateError        TransportError = 0x05
	FinalSizeError          TransportError = 0x06
	FrameEncodingError      TransportError = 0x07
	TransportParameterError TransportError = 0x08
	ConnectionIDLimitError  TransportError = 0x09
	ProtocolViolation       TransportError = 0x0a
	InvalidToken            TransportError = 0x0b
	ApplicationError        TransportError = 0x0c
	CryptoBufferExceeded    TransportError = 0x0d
	KeyUpdateError          TransportError = 0x0e
	AEADLimitReached        TransportError = 0x0f
	NoViablePath            TransportError = 0x10
	CryptoError             TransportError = 0x100 // 0x100-0x1ff: plus the TLS alert
)

var transportErrorNames = [...]string{
	"NO_ERROR", "INTERNAL_ERROR", "CONNECTION_REFUSED", "FLOW_CONTROL_ERROR", "STREAM_LIMIT_ERROR",
	"STREAM_STATE_ERROR", "FINAL_SIZE_ERROR", "FRAME_ENCODING_ERROR", "TRANSPORT_PARAMETER_ERROR",
	"CONNECTION_ID_LIMIT_ERROR", "PROTOCOL_VIOLATION", "INVALID_TOKEN", "APPLICATION_ERROR",
	"CRYPTO_BUFFER_EXCEEDED", "KEY_UPDATE_ERROR", "AEAD_LIMIT_REACHED", "NO_VIABLE_PATH",
}

// String is the code's name in RFC 9000 ("CRYPTO_ERROR(0x128)" for a TLS
// alert).
func (e TransportError) String() string {
	switch {
	case int(e) < len(transportErrorNames):
		return transportErrorNames[e]
	case e >= CryptoError && e <= 0x1ff:
		return fmt.Sprintf("CRYPTO_ERROR(0x%x)", uint64(e))
	}
	return fmt.Sprintf("transport error 0x%x", uint64(e))
}
