package quicabi

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// Protocol number and socket-option level. Neither is in x/sys/unix.
const (
	// IPPROTO_QUIC is the protocol argument of socket(2) for a kernel QUIC
	// socket (with AF_INET or AF_INET6, and SOCK_DGRAM or SOCK_STREAM).
	IPPROTO_QUIC = 261
	// SOL_QUIC is the level of QUIC socket options and control messages.
	SOL_QUIC = 288
)

// Control-message types (cmsg_type at level SOL_QUIC).
const (
	// QUIC_STREAM_INFO carries a StreamInfo: on send it picks the stream and
	// its flags, on receive it names the stream and reports FIN.
	QUIC_STREAM_INFO = 0
	// QUIC_HANDSHAKE_INFO carries a HandshakeInfo: the crypto level of the
	// TLS handshake bytes being sent or received.
	QUIC_HANDSHAKE_INFO = 1
)

// Stream ID type bits (RFC 9000 section 2.1).
const (
	// QUIC_STREAM_TYPE_SERVER_MASK is set in IDs of server-initiated streams.
	QUIC_STREAM_TYPE_SERVER_MASK = 0x01
	// QUIC_STREAM_TYPE_UNI_MASK is set in IDs of unidirectional streams.
	QUIC_STREAM_TYPE_UNI_MASK = 0x02
	// QUIC_STREAM_TYPE_MASK selects both type bits.
	QUIC_STREAM_TYPE_MASK = 0x03
)

// Socket options (level SOL_QUIC).
const (
	QUIC_SOCKOPT_EVENT                = 0  // set/get EventOption: enable or query one event type
	QUIC_SOCKOPT_STREAM_OPEN          = 1  // get (in/out) StreamInfo: open a stream
	QUIC_SOCKOPT_STREAM_RESET         = 2  // set ErrInfo: send RESET_STREAM
	QUIC_SOCKOPT_STREAM_STOP_SENDING  = 3  // set ErrInfo: send STOP_SENDING
	QUIC_SOCKOPT_CONNECTION_ID        = 4  // set/get (in/out) ConnectionIDInfo
	QUIC_SOCKOPT_CONNECTION_CLOSE     = 5  // set/get ConnectionClose
	QUIC_SOCKOPT_CONNECTION_MIGRATION = 6  // set sockaddr_in/sockaddr_in6
	QUIC_SOCKOPT_KEY_UPDATE           = 7  // set, no value: start a key update
	QUIC_SOCKOPT_TRANSPORT_PARAM      = 8  // set/get (in/out) TransportParam
	QUIC_SOCKOPT_CONFIG               = 9  // set/get Config
	QUIC_SOCKOPT_TOKEN                = 10 // set/get raw token bytes
	QUIC_SOCKOPT_ALPN                 = 11 // set/get comma-separated ALPN list
	QUIC_SOCKOPT_SESSION_TICKET       = 12 // set/get raw session data or ticket key
	QUIC_SOCKOPT_CRYPTO_SECRET        = 13 // set CryptoSecret: install a traffic secret
	QUIC_SOCKOPT_TRANSPORT_PARAM_EXT  = 14 // set/get TLS extension 0x39 body
)

// QUIC versions (Config.Version).
const (
	QUIC_VERSION_V1 = 0x00000001 // RFC 9000
	QUIC_VERSION_V2 = 0x6b3343cf // RFC 9369
)

// Buffer sizes fixed by the ABI.
const (
	// QUIC_CRYPTO_SECRET_BUFFER_SIZE is the size of CryptoSecret.Secret.
	QUIC_CRYPTO_SECRET_BUFFER_SIZE = 48
	// QUIC_CLOSE_PHRASE_BUFFER_SIZE is the size of the phrase buffer of
	// struct quic_connection_close, including its terminating NUL.
	QUIC_CLOSE_PHRASE_BUFFER_SIZE = 64
)

// CryptoLevel is the kernel's enum quic_crypto_level. Its numbering differs
// from tls.QUICEncryptionLevel; convert with CryptoLevelFromTLS and
// CryptoLevel.TLSLevel.
type CryptoLevel uint8

// Crypto levels.
const (
	QUIC_CRYPTO_APP       CryptoLevel = 0 // 1-RTT (tls.QUICEncryptionLevelApplication)
	QUIC_CRYPTO_INITIAL   CryptoLevel = 1 // tls.QUICEncryptionLevelInitial
	QUIC_CRYPTO_HANDSHAKE CryptoLevel = 2 // tls.QUICEncryptionLevelHandshake
	QUIC_CRYPTO_EARLY     CryptoLevel = 3 // 0-RTT (tls.QUICEncryptionLevelEarly)
	QUIC_CRYPTO_MAX       CryptoLevel = 4 // number of levels; not a level
)

var cryptoLevelNames = [...]string{"APP", "INITIAL", "HANDSHAKE", "EARLY"}

// String returns the kernel name of l without the QUIC_CRYPTO_ prefix.
func (l CryptoLevel) String() string {
	if int(l) < len(cryptoLevelNames) {
		return cryptoLevelNames[l]
	}
	return fmt.Sprintf("CryptoLevel(%d)", uint8(l))
}

// CryptoLevelFromTLS maps a crypto/tls QUIC encryption level to the kernel's
// crypto level.
func CryptoLevelFromTLS(l tls.QUICEncryptionLevel) (CryptoLevel, error) {
	switch l {
	case tls.QUICEncryptionLevelInitial:
		return QUIC_CRYPTO_INITIAL, nil
	case tls.QUICEncryptionLevelEarly:
		return QUIC_CRYPTO_EARLY, nil
	case tls.QUICEncryptionLevelHandshake:
		return QUIC_CRYPTO_HANDSHAKE, nil
	case tls.QUICEncryptionLevelApplication:
		return QUIC_CRYPTO_APP, nil
	}
	return 0, fmt.Errorf("quicabi: no kernel crypto level for TLS encryption level %d", int(l))
}

// TLSLevel maps the kernel crypto level l to the crypto/tls QUIC encryption
// level.
func (l CryptoLevel) TLSLevel() (tls.QUICEncryptionLevel, error) {
	switch l {
	case QUIC_CRYPTO_INITIAL:
		return tls.QUICEncryptionLevelInitial, nil
	case QUIC_CRYPTO_EARLY:
		return tls.QUICEncryptionLevelEarly, nil
	case QUIC_CRYPTO_HANDSHAKE:
		return tls.QUICEncryptionLevelHandshake, nil
	case QUIC_CRYPTO_APP:
		return tls.QUICEncryptionLevelApplication, nil
	}
	return 0, fmt.Errorf("quicabi: kernel crypto level %d is not a valid level (0..%d)", uint8(l), uint8(QUIC_CRYPTO_MAX)-1)
}

// CipherType is a kernel TLS cipher id (TLS_CIPHER_* from <linux/tls.h>), as
// used in CryptoSecret.Type and Config.PayloadCipherType.
type CipherType uint32

// Cipher ids the QUIC module supports. They are not in x/sys/unix.
const (
	TLS_CIPHER_AES_GCM_128       CipherType = 51
	TLS_CIPHER_AES_GCM_256       CipherType = 52
	TLS_CIPHER_AES_CCM_128       CipherType = 53
	TLS_CIPHER_CHACHA20_POLY1305 CipherType = 54
)

// tlsAES128CCMSHA256 is the TLS 1.3 suite TLS_AES_128_CCM_SHA256 (RFC 8446
// B.4), which crypto/tls does not implement and so does not name.
const tlsAES128CCMSHA256 = 0x1304

// String returns the kernel name of c without the TLS_CIPHER_ prefix.
func (c CipherType) String() string {
	switch c {
	case TLS_CIPHER_AES_GCM_128:
		return "AES_GCM_128"
	case TLS_CIPHER_AES_GCM_256:
		return "AES_GCM_256"
	case TLS_CIPHER_AES_CCM_128:
		return "AES_CCM_128"
	case TLS_CIPHER_CHACHA20_POLY1305:
		return "CHACHA20_POLY1305"
	}
	return fmt.Sprintf("CipherType(%d)", uint32(c))
}

// SecretLen returns the length of a traffic secret for cipher c (the hash
// length of its TLS 1.3 suite): 48 for AES-256-GCM, 32 for the others, and 0
// for an id the module does not support.
func (c CipherType) SecretLen() int {
	switch c {
	case TLS_CIPHER_AES_GCM_128, TLS_CIPHER_AES_CCM_128, TLS_CIPHER_CHACHA20_POLY1305:
		return 32
	case TLS_CIPHER_AES_GCM_256:
		return 48
	}
	return 0
}

// CipherFromTLSSuite maps a TLS 1.3 cipher suite id (as in tls.QUICEvent.Suite)
// to the kernel cipher id: 0x1301→51, 0x1302→52, 0x1303→54, and 0x1304
// (TLS_AES_128_CCM_SHA256, not offered by crypto/tls)→53.
func CipherFromTLSSuite(suite uint16) (CipherType, error) {
	switch suite {
	case tls.TLS_AES_128_GCM_SHA256:
		return TLS_CIPHER_AES_GCM_128, nil
	case tls.TLS_AES_256_GCM_SHA384:
		return TLS_CIPHER_AES_GCM_256, nil
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		return TLS_CIPHER_CHACHA20_POLY1305, nil
	case tlsAES128CCMSHA256:
		return TLS_CIPHER_AES_CCM_128, nil
	}
	return 0, fmt.Errorf("quicabi: TLS cipher suite 0x%04x (%s) has no kernel QUIC cipher", suite, tls.CipherSuiteName(suite))
}

// TLSSuite maps the kernel cipher id c to its TLS 1.3 cipher suite id; it is
// the inverse of CipherFromTLSSuite.
func (c CipherType) TLSSuite() (uint16, error) {
	switch c {
	case TLS_CIPHER_AES_GCM_128:
		return tls.TLS_AES_128_GCM_SHA256, nil
	case TLS_CIPHER_AES_GCM_256:
		return tls.TLS_AES_256_GCM_SHA384, nil
	case TLS_CIPHER_CHACHA20_POLY1305:
		return tls.TLS_CHACHA20_POLY1305_SHA256, nil
	case TLS_CIPHER_AES_CCM_128:
		return tlsAES128CCMSHA256, nil
	}
	return 0, fmt.Errorf("quicabi: kernel cipher id %d is not supported by the QUIC module (want 51..54)", uint32(c))
}

// CongAlgo is the kernel's enum quic_cong_algo (Config.CongestionControlAlgo).
type CongAlgo uint8

// Congestion-control algorithms.
const (
	QUIC_CONG_ALG_RENO  CongAlgo = 0
	QUIC_CONG_ALG_CUBIC CongAlgo = 1
	QUIC_CONG_ALG_MAX   CongAlgo = 2 // number of algorithms; not an algorithm
)

// String returns the kernel name of a without the QUIC_CONG_ALG_ prefix.
func (a CongAlgo) String() string {
	switch a {
	case QUIC_CONG_ALG_RENO:
		return "RENO"
	case QUIC_CONG_ALG_CUBIC:
		return "CUBIC"
	}
	return fmt.Sprintf("CongAlgo(%d)", uint8(a))
}

// EventType is the kernel's enum quic_event_type: byte 0 of an event
// notification and EventOption.Type.
type EventType uint8

// Event types.
const (
	QUIC_EVENT_NONE                 EventType = 0 // never sent; invalid in EventOption
	QUIC_EVENT_STREAM_UPDATE        EventType = 1 // payload StreamUpdate
	QUIC_EVENT_STREAM_MAX_DATA      EventType = 2 // payload StreamMaxData
	QUIC_EVENT_STREAM_MAX_STREAM    EventType = 3 // payload u64: see MaxStreams
	QUIC_EVENT_CONNECTION_ID        EventType = 4 // payload ConnectionIDInfo
	QUIC_EVENT_CONNECTION_CLOSE     EventType = 5 // payload ConnectionClose
	QUIC_EVENT_CONNECTION_MIGRATION EventType = 6 // payload u8: see Migration
	QUIC_EVENT_KEY_UPDATE           EventType = 7 // payload u8: see KeyUpdate
	QUIC_EVENT_NEW_TOKEN            EventType = 8 // payload raw token
	QUIC_EVENT_NEW_SESSION_TICKET   EventType = 9 // payload raw NewSessionTicket message
	QUIC_EVENT_MAX                  EventType = 10
)

var eventTypeNames = [...]string{
	"NONE", "STREAM_UPDATE", "STREAM_MAX_DATA", "STREAM_MAX_STREAM", "CONNECTION_ID",
	"CONNECTION_CLOSE", "CONNECTION_MIGRATION", "KEY_UPDATE", "NEW_TOKEN", "NEW_SESSION_TICKET",
}

// String returns the kernel name of t without the QUIC_EVENT_ prefix.
func (t EventType) String() string {
	if int(t) < len(eventTypeNames) {
		return eventTypeNames[t]
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// StreamState is a stream send or receive state, as in StreamUpdate.State
// (RFC 9000 section 3).
type StreamState uint8

// Stream states. Values 0..5 are send-side states, 6..11 receive-side.
const (
	QUIC_STREAM_SEND_STATE_READY       StreamState = 0
	QUIC_STREAM_SEND_STATE_SEND        StreamState = 1
	QUIC_STREAM_SEND_STATE_SENT        StreamState = 2
	QUIC_STREAM_SEND_STATE_RECVD       StreamState = 3
	QUIC_STREAM_SEND_STATE_RESET_SENT  StreamState = 4
	QUIC_STREAM_SEND_STATE_RESET_RECVD StreamState = 5
	QUIC_STREAM_RECV_STATE_RECV        StreamState = 6
	QUIC_STREAM_RECV_STATE_SIZE_KNOWN  StreamState = 7
	QUIC_STREAM_RECV_STATE_RECVD       StreamState = 8
	QUIC_STREAM_RECV_STATE_READ        StreamState = 9
	QUIC_STREAM_RECV_STATE_RESET_RECVD StreamState = 10
	QUIC_STREAM_RECV_STATE_RESET_READ  StreamState = 11
)

var streamStateNames = [...]string{
	"SEND_STATE_READY", "SEND_STATE_SEND", "SEND_STATE_SENT", "SEND_STATE_RECVD",
	"SEND_STATE_RESET_SENT", "SEND_STATE_RESET_RECVD",
	"RECV_STATE_RECV", "RECV_STATE_SIZE_KNOWN", "RECV_STATE_RECVD", "RECV_STATE_READ",
	"RECV_STATE_RESET_RECVD", "RECV_STATE_RESET_READ",
}

// String returns the kernel name of s without the QUIC_STREAM_ prefix.
func (s StreamState) String() string {
	if int(s) < len(streamStateNames) {
		return streamStateNames[s]
	}
	return fmt.Sprintf("StreamState(%d)", uint8(s))
}

// Transport error codes (RFC 9000 section 20.1, RFC 9368 section 10.2), as
// carried in ConnectionClose.ErrCode.
const (
	QUIC_TRANSPORT_ERROR_NONE                = 0x00
	QUIC_TRANSPORT_ERROR_INTERNAL            = 0x01
	QUIC_TRANSPORT_ERROR_CONNECTION_REFUSED  = 0x02
	QUIC_TRANSPORT_ERROR_FLOW_CONTROL        = 0x03
	QUIC_TRANSPORT_ERROR_STREAM_LIMIT        = 0x04
	QUIC_TRANSPORT_ERROR_STREAM_STATE        = 0x05
	QUIC_TRANSPORT_ERROR_FINAL_SIZE          = 0x06
	QUIC_TRANSPORT_ERROR_FRAME_ENCODING      = 0x07
	QUIC_TRANSPORT_ERROR_TRANSPORT_PARAM     = 0x08
	QUIC_TRANSPORT_ERROR_CONNECTION_ID_LIMIT = 0x09
	QUIC_TRANSPORT_ERROR_PROTOCOL_VIOLATION  = 0x0a
	QUIC_TRANSPORT_ERROR_INVALID_TOKEN       = 0x0b
	QUIC_TRANSPORT_ERROR_APPLICATION         = 0x0c
	QUIC_TRANSPORT_ERROR_CRYPTO_BUF_EXCEEDED = 0x0d
	QUIC_TRANSPORT_ERROR_KEY_UPDATE          = 0x0e
	QUIC_TRANSPORT_ERROR_AEAD_LIMIT_REACHED  = 0x0f
	QUIC_TRANSPORT_ERROR_NO_VIABLE_PATH      = 0x10
	QUIC_TRANSPORT_ERROR_VERSION_NEGOTIATION = 0x11
	// QUIC_TRANSPORT_ERROR_CRYPTO is the first of 256 codes 0x100+alert that
	// carry a TLS alert (CRYPTO_ERROR, RFC 9001 section 4.8).
	QUIC_TRANSPORT_ERROR_CRYPTO = 0x0100
)

// transportErrorNames holds the RFC names of codes 0x00..0x11.
var transportErrorNames = [...]string{
	"NO_ERROR", "INTERNAL_ERROR", "CONNECTION_REFUSED", "FLOW_CONTROL_ERROR",
	"STREAM_LIMIT_ERROR", "STREAM_STATE_ERROR", "FINAL_SIZE_ERROR", "FRAME_ENCODING_ERROR",
	"TRANSPORT_PARAMETER_ERROR", "CONNECTION_ID_LIMIT_ERROR", "PROTOCOL_VIOLATION", "INVALID_TOKEN",
	"APPLICATION_ERROR", "CRYPTO_BUFFER_EXCEEDED", "KEY_UPDATE_ERROR", "AEAD_LIMIT_REACHED",
	"NO_VIABLE_PATH", "VERSION_NEGOTIATION_ERROR",
}

// TransportErrorName returns the RFC name of a QUIC transport error code, such
// as "FLOW_CONTROL_ERROR". A code 0x100+alert is named
// "CRYPTO_ERROR(alert N: description)", without the description for an alert
// crypto/tls does not know. Other codes give "0x" and the code in hex. Application error codes share the number space, so callers must know
// from context (the frame type) that code is a transport error.
func TransportErrorName(code uint64) string {
	if code < uint64(len(transportErrorNames)) {
		return transportErrorNames[code]
	}
	if code >= QUIC_TRANSPORT_ERROR_CRYPTO && code <= QUIC_TRANSPORT_ERROR_CRYPTO+0xff {
		alert := uint8(code - QUIC_TRANSPORT_ERROR_CRYPTO)
		desc := strings.TrimPrefix(tls.AlertError(alert).Error(), "tls: ")
		if strings.HasPrefix(desc, "alert(") { // crypto/tls has no name for it
			return fmt.Sprintf("CRYPTO_ERROR(alert %d)", alert)
		}
		return fmt.Sprintf("CRYPTO_ERROR(alert %d: %s)", alert, desc)
	}
	return fmt.Sprintf("0x%x", code)
}
