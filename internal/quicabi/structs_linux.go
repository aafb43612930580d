package quicabi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// ErrTruncated is wrapped by every error about a buffer that is shorter than
// the struct, control message or event payload it should hold.
var ErrTruncated = errors.New("buffer too short")

// ne is the byte order of the kernel ABI: the host's.
var ne = binary.NativeEndian

// Sizes of the ABI structs (sizeof on x86-64 and other 64-bit Linux targets;
// on i386, where 64-bit fields are 4-byte aligned, quic_errinfo and
// quic_stream_info would be 12 bytes, and that target is not supported).
const (
	SizeofTransportParam   = 56 // struct quic_transport_param
	SizeofConfig           = 28 // struct quic_config
	SizeofCryptoSecret     = 56 // struct quic_crypto_secret
	SizeofErrInfo          = 16 // struct quic_errinfo
	SizeofConnectionIDInfo = 12 // struct quic_connection_id_info
	SizeofEventOption      = 2  // struct quic_event_option
	SizeofConnectionClose  = 72 // struct quic_connection_close
	SizeofStreamInfo       = 16 // struct quic_stream_info
	SizeofHandshakeInfo    = 1  // struct quic_handshake_info
	SizeofStreamUpdate     = 24 // struct quic_stream_update
	SizeofStreamMaxData    = 16 // struct quic_stream_max_data
)

// checkLen returns an error unless b holds at least size bytes of struct
// cname.
func checkLen(b []byte, size int, cname string) error {
	if len(b) < size {
		return fmt.Errorf("quicabi: decoding struct %s: got %d bytes, need %d: %w", cname, len(b), size, ErrTruncated)
	}
	return nil
}

func putBool(b []byte, off int, v bool) {
	if v {
		b[off] = 1
	} else {
		b[off] = 0
	}
}

// TransportParam is struct quic_transport_param, the value of
// QUIC_SOCKOPT_TRANSPORT_PARAM. When set, a zero field leaves the kernel's
// value unchanged. Times are in microseconds.
type TransportParam struct {
	Remote                   bool   // @0: the peer's parameters rather than the local ones
	DisableActiveMigration   bool   // @1
	GreaseQUICBit            bool   // @2
	StatelessReset           bool   // @3
	Disable1RTTEncryption    bool   // @4
	DisableCompatibleVersion bool   // @5
	ActiveConnectionIDLimit  uint8  // @6
	AckDelayExponent         uint8  // @7
	MaxDatagramFrameSize     uint16 // @8
	MaxUDPPayloadSize        uint16 // @10
	MaxIdleTimeout           uint32 // @12
	MaxAckDelay              uint32 // @16
	MaxStreamsBidi           uint16 // @20
	MaxStreamsUni            uint16 // @22
	MaxData                  uint64 // @24
	MaxStreamDataBidiLocal   uint64 // @32
	MaxStreamDataBidiRemote  uint64 // @40
	MaxStreamDataUni         uint64 // @48
}

// Marshal returns p in the kernel layout (SizeofTransportParam bytes).
func (p TransportParam) Marshal() []byte {
	b := make([]byte, SizeofTransportParam)
	putBool(b, 0, p.Remote)
	putBool(b, 1, p.DisableActiveMigration)
	putBool(b, 2, p.GreaseQUICBit)
	putBool(b, 3, p.StatelessReset)
	putBool(b, 4, p.Disable1RTTEncryption)
	putBool(b, 5, p.DisableCompatibleVersion)
	b[6] = p.ActiveConnectionIDLimit
	b[7] = p.AckDelayExponent
	ne.PutUint16(b[8:], p.MaxDatagramFrameSize)
	ne.PutUint16(b[10:], p.MaxUDPPayloadSize)
	ne.PutUint32(b[12:], p.MaxIdleTimeout)
	ne.PutUint32(b[16:], p.MaxAckDelay)
	ne.PutUint16(b[20:], p.MaxStreamsBidi)
	ne.PutUint16(b[22:], p.MaxStreamsUni)
	ne.PutUint64(b[24:], p.MaxData)
	ne.PutUint64(b[32:], p.MaxStreamDataBidiLocal)
	ne.PutUint64(b[40:], p.MaxStreamDataBidiRemote)
	ne.PutUint64(b[48:], p.MaxStreamDataUni)
	return b
}

// UnmarshalTransportParam decodes a struct quic_transport_param from the
// first SizeofTransportParam bytes of b.
func UnmarshalTransportParam(b []byte) (TransportParam, error) {
	if err := checkLen(b, SizeofTransportParam, "quic_transport_param"); err != nil {
		return TransportParam{}, err
	}
	return TransportParam{
		Remote:                   b[0] != 0,
		DisableActiveMigration:   b[1] != 0,
		GreaseQUICBit:            b[2] != 0,
		StatelessReset:           b[3] != 0,
		Disable1RTTEncryption:    b[4] != 0,
		DisableCompatibleVersion: b[5] != 0,
		ActiveConnectionIDLimit:  b[6],
		AckDelayExponent:         b[7],
		MaxDatagramFrameSize:     ne.Uint16(b[8:]),
		MaxUDPPayloadSize:        ne.Uint16(b[10:]),
		MaxIdleTimeout:           ne.Uint32(b[12:]),
		MaxAckDelay:              ne.Uint32(b[16:]),
		MaxStreamsBidi:           ne.Uint16(b[20:]),
		MaxStreamsUni:            ne.Uint16(b[22:]),
		MaxData:                  ne.Uint64(b[24:]),
		MaxStreamDataBidiLocal:   ne.Uint64(b[32:]),
		MaxStreamDataBidiRemote:  ne.Uint64(b[40:]),
		MaxStreamDataUni:         ne.Uint64(b[48:]),
	}, nil
}

// Config is struct quic_config, the value of QUIC_SOCKOPT_CONFIG. When set, a
// zero field leaves the kernel's value unchanged. Times are in microseconds.
type Config struct {
	Version                uint32     // @0: QUIC_VERSION_V1, QUIC_VERSION_V2, or another to force version negotiation
	PLPMTUDProbeInterval   uint32     // @4
	InitialSmoothedRTT     uint32     // @8
	PayloadCipherType      CipherType // @12: a hint for handshake agents; unused by the kernel
	CongestionControlAlgo  CongAlgo   // @16
	ValidatePeerAddress    bool       // @17: server: send Retry
	StreamDataNodelay      bool       // @18
	ReceiveSessionTicket   uint8      // @19: a hint for handshake agents
	CertificateRequest     uint8      // @20: a hint for handshake agents
	KeepaliveProbeInterval uint32     // @24 (@21..23 reserved)
}

// Marshal returns c in the kernel layout (SizeofConfig bytes).
func (c Config) Marshal() []byte {
	b := make([]byte, SizeofConfig)
	ne.PutUint32(b[0:], c.Version)
	ne.PutUint32(b[4:], c.PLPMTUDProbeInterval)
	ne.PutUint32(b[8:], c.InitialSmoothedRTT)
	ne.PutUint32(b[12:], uint32(c.PayloadCipherType))
	b[16] = uint8(c.CongestionControlAlgo)
	putBool(b, 17, c.ValidatePeerAddress)
	putBool(b, 18, c.StreamDataNodelay)
	b[19] = c.ReceiveSessionTicket
	b[20] = c.CertificateRequest
	ne.PutUint32(b[24:], c.KeepaliveProbeInterval)
	return b
}

// UnmarshalConfig decodes a struct quic_config from the first SizeofConfig
// bytes of b.
func UnmarshalConfig(b []byte) (Config, error) {
	if err := checkLen(b, SizeofConfig, "quic_config"); err != nil {
		return Config{}, err
	}
	return Config{
		Version:                ne.Uint32(b[0:]),
		PLPMTUDProbeInterval:   ne.Uint32(b[4:]),
		InitialSmoothedRTT:     ne.Uint32(b[8:]),
		PayloadCipherType:      CipherType(ne.Uint32(b[12:])),
		CongestionControlAlgo:  CongAlgo(b[16]),
		ValidatePeerAddress:    b[17] != 0,
		StreamDataNodelay:      b[18] != 0,
		ReceiveSessionTicket:   b[19],
		CertificateRequest:     b[20],
		KeepaliveProbeInterval: ne.Uint32(b[24:]),
	}, nil
}

// CryptoSecret is struct quic_crypto_secret, the value of
// QUIC_SOCKOPT_CRYPTO_SECRET. Build it with NewCryptoSecret, which checks the
// level and the secret length. The encoded bytes hold the secret: clear them
// once the setsockopt is done, and call Zero on the struct.
type CryptoSecret struct {
	Send   bool                                 // @0: true for the write (TX) secret, false for read (RX)
	Level  CryptoLevel                          // @1
	Type   CipherType                           // @4 (@2..3 reserved)
	Secret [QUIC_CRYPTO_SECRET_BUFFER_SIZE]byte // @8: only Type.SecretLen() bytes are used
}

// NewCryptoSecret returns the CryptoSecret that installs secret as the send
// (or receive) secret of level, for cipher. The level must be APP, HANDSHAKE
// or EARLY (the kernel derives Initial secrets itself), and len(secret) must
// be cipher.SecretLen().
func NewCryptoSecret(send bool, level CryptoLevel, cipher CipherType, secret []byte) (CryptoSecret, error) {
	switch level {
	case QUIC_CRYPTO_APP, QUIC_CRYPTO_HANDSHAKE, QUIC_CRYPTO_EARLY:
	default:
		return CryptoSecret{}, fmt.Errorf("quicabi: crypto secret for level %v: only APP, HANDSHAKE and EARLY secrets can be installed", level)
	}
	n := cipher.SecretLen()
	if n == 0 {
		return CryptoSecret{}, fmt.Errorf("quicabi: crypto secret for level %v: kernel cipher id %d is not supported (want 51..54)", level, uint32(cipher))
	}
	if len(secret) != n {
		return CryptoSecret{}, fmt.Errorf("quicabi: crypto secret for level %v: %v needs a %d-byte secret, got %d bytes", level, cipher, n, len(secret))
	}
	s := CryptoSecret{Send: send, Level: level, Type: cipher}
	copy(s.Secret[:], secret)
	return s, nil
}

// Zero overwrites the secret held in s.
func (s *CryptoSecret) Zero() {
	clear(s.Secret[:])
}

// Marshal returns s in the kernel layout (SizeofCryptoSecret bytes). The
// result holds the secret.
func (s CryptoSecret) Marshal() []byte {
	b := make([]byte, SizeofCryptoSecret)
	putBool(b, 0, s.Send)
	b[1] = uint8(s.Level)
	ne.PutUint32(b[4:], uint32(s.Type))
	copy(b[8:], s.Secret[:])
	return b
}

// UnmarshalCryptoSecret decodes a struct quic_crypto_secret from the first
// SizeofCryptoSecret bytes of b.
func UnmarshalCryptoSecret(b []byte) (CryptoSecret, error) {
	if err := checkLen(b, SizeofCryptoSecret, "quic_crypto_secret"); err != nil {
		return CryptoSecret{}, err
	}
	s := CryptoSecret{
		Send:  b[0] != 0,
		Level: CryptoLevel(b[1]),
		Type:  CipherType(ne.Uint32(b[4:])),
	}
	copy(s.Secret[:], b[8:SizeofCryptoSecret])
	return s, nil
}

// ErrInfo is struct quic_errinfo, the value of QUIC_SOCKOPT_STREAM_RESET and
// QUIC_SOCKOPT_STREAM_STOP_SENDING.
type ErrInfo struct {
	StreamID int64  // @0
	ErrCode  uint32 // @8 (@12..15 padding)
}

// Marshal returns e in the kernel layout (SizeofErrInfo bytes).
func (e ErrInfo) Marshal() []byte {
	b := make([]byte, SizeofErrInfo)
	ne.PutUint64(b[0:], uint64(e.StreamID))
	ne.PutUint32(b[8:], e.ErrCode)
	return b
}

// UnmarshalErrInfo decodes a struct quic_errinfo from the first SizeofErrInfo
// bytes of b.
func UnmarshalErrInfo(b []byte) (ErrInfo, error) {
	if err := checkLen(b, SizeofErrInfo, "quic_errinfo"); err != nil {
		return ErrInfo{}, err
	}
	return ErrInfo{StreamID: int64(ne.Uint64(b[0:])), ErrCode: ne.Uint32(b[8:])}, nil
}

// ConnectionIDInfo is struct quic_connection_id_info, the value of
// QUIC_SOCKOPT_CONNECTION_ID and the payload of QUIC_EVENT_CONNECTION_ID.
// Active and PriorTo are connection ID sequence numbers.
type ConnectionIDInfo struct {
	Dest    bool   // @0: destination (peer-issued) IDs rather than source IDs
	Active  uint32 // @4 (@1..3 reserved)
	PriorTo uint32 // @8
}

// Marshal returns c in the kernel layout (SizeofConnectionIDInfo bytes).
func (c ConnectionIDInfo) Marshal() []byte {
	b := make([]byte, SizeofConnectionIDInfo)
	putBool(b, 0, c.Dest)
	ne.PutUint32(b[4:], c.Active)
	ne.PutUint32(b[8:], c.PriorTo)
	return b
}

// UnmarshalConnectionIDInfo decodes a struct quic_connection_id_info from the
// first SizeofConnectionIDInfo bytes of b.
func UnmarshalConnectionIDInfo(b []byte) (ConnectionIDInfo, error) {
	if err := checkLen(b, SizeofConnectionIDInfo, "quic_connection_id_info"); err != nil {
		return ConnectionIDInfo{}, err
	}
	return ConnectionIDInfo{Dest: b[0] != 0, Active: ne.Uint32(b[4:]), PriorTo: ne.Uint32(b[8:])}, nil
}

// EventOption is struct quic_event_option, the value of QUIC_SOCKOPT_EVENT.
type EventOption struct {
	Type EventType // @0: 1..QUIC_EVENT_MAX-1
	On   bool      // @1
}

// Marshal returns o in the kernel layout (SizeofEventOption bytes).
func (o EventOption) Marshal() []byte {
	b := make([]byte, SizeofEventOption)
	b[0] = uint8(o.Type)
	putBool(b, 1, o.On)
	return b
}

// UnmarshalEventOption decodes a struct quic_event_option from the first
// SizeofEventOption bytes of b.
func UnmarshalEventOption(b []byte) (EventOption, error) {
	if err := checkLen(b, SizeofEventOption, "quic_event_option"); err != nil {
		return EventOption{}, err
	}
	return EventOption{Type: EventType(b[0]), On: b[1] != 0}, nil
}

// ConnectionClose is struct quic_connection_close, the value of
// QUIC_SOCKOPT_CONNECTION_CLOSE and the payload of
// QUIC_EVENT_CONNECTION_CLOSE. It is also the Event for the latter.
type ConnectionClose struct {
	ErrCode uint32 // @0: transport or application error code
	Frame   uint8  // @4: frame type that caused a transport error, or 0
	// Phrase is the reason phrase, stored @8 in a 64-byte NUL-terminated
	// buffer (@5..7 reserved). Decoding stops at the first NUL. Marshal
	// writes at most 64 bytes; the kernel reads at most 63 on set, so use
	// Validate before setting.
	Phrase string
}

// maxPhraseLen is the longest phrase the kernel accepts on set: it copies
// only the first 71 bytes of the struct, leaving room for the NUL.
const maxPhraseLen = QUIC_CLOSE_PHRASE_BUFFER_SIZE - 1

// Validate reports whether c can be set with QUIC_SOCKOPT_CONNECTION_CLOSE
// unchanged: the phrase must be at most 63 bytes and contain no NUL.
func (c ConnectionClose) Validate() error {
	if len(c.Phrase) > maxPhraseLen {
		return fmt.Errorf("quicabi: connection close phrase is %d bytes, the kernel keeps at most %d", len(c.Phrase), maxPhraseLen)
	}
	if i := strings.IndexByte(c.Phrase, 0); i >= 0 {
		return fmt.Errorf("quicabi: connection close phrase has a NUL byte at offset %d", i)
	}
	return nil
}

// Marshal returns c in the kernel layout (SizeofConnectionClose bytes). A
// phrase longer than 64 bytes is cut to 64.
func (c ConnectionClose) Marshal() []byte {
	b := make([]byte, SizeofConnectionClose)
	ne.PutUint32(b[0:], c.ErrCode)
	b[4] = c.Frame
	copy(b[8:SizeofConnectionClose], c.Phrase)
	return b
}

// UnmarshalConnectionClose decodes a struct quic_connection_close from the
// first SizeofConnectionClose bytes of b.
func UnmarshalConnectionClose(b []byte) (ConnectionClose, error) {
	if err := checkLen(b, SizeofConnectionClose, "quic_connection_close"); err != nil {
		return ConnectionClose{}, err
	}
	phrase := b[8:SizeofConnectionClose]
	if i := bytes.IndexByte(phrase, 0); i >= 0 {
		phrase = phrase[:i]
	}
	return ConnectionClose{ErrCode: ne.Uint32(b[0:]), Frame: b[4], Phrase: string(phrase)}, nil
}

// StreamInfo is struct quic_stream_info: the payload of a QUIC_STREAM_INFO
// control message and the value of QUIC_SOCKOPT_STREAM_OPEN.
type StreamInfo struct {
	StreamID int64  // @0: -1 on send or open means "next" (see MSG_QUIC_STREAM_NEW)
	Flags    uint32 // @8: MSG_QUIC_STREAM_* flags (@12..15 padding)
}

// Marshal returns s in the kernel layout (SizeofStreamInfo bytes).
func (s StreamInfo) Marshal() []byte {
	b := make([]byte, SizeofStreamInfo)
	ne.PutUint64(b[0:], uint64(s.StreamID))
	ne.PutUint32(b[8:], s.Flags)
	return b
}

// UnmarshalStreamInfo decodes a struct quic_stream_info from the first
// SizeofStreamInfo bytes of b.
func UnmarshalStreamInfo(b []byte) (StreamInfo, error) {
	if err := checkLen(b, SizeofStreamInfo, "quic_stream_info"); err != nil {
		return StreamInfo{}, err
	}
	return StreamInfo{StreamID: int64(ne.Uint64(b[0:])), Flags: ne.Uint32(b[8:])}, nil
}

// HandshakeInfo is struct quic_handshake_info, the payload of a
// QUIC_HANDSHAKE_INFO control message.
type HandshakeInfo struct {
	Level CryptoLevel // @0
}

// Marshal returns h in the kernel layout (SizeofHandshakeInfo bytes).
func (h HandshakeInfo) Marshal() []byte {
	return []byte{uint8(h.Level)}
}

// UnmarshalHandshakeInfo decodes a struct quic_handshake_info from the first
// byte of b.
func UnmarshalHandshakeInfo(b []byte) (HandshakeInfo, error) {
	if err := checkLen(b, SizeofHandshakeInfo, "quic_handshake_info"); err != nil {
		return HandshakeInfo{}, err
	}
	return HandshakeInfo{Level: CryptoLevel(b[0])}, nil
}

// StreamUpdate is struct quic_stream_update, the payload of
// QUIC_EVENT_STREAM_UPDATE. It is also the Event for it.
type StreamUpdate struct {
	ID        int64       // @0
	State     StreamState // @8 (@9..11 reserved)
	ErrCode   uint32      // @12: for the RESET states
	FinalSize uint64      // @16: for SIZE_KNOWN, RECVD and the RESET states
}

// Marshal returns u in the kernel layout (SizeofStreamUpdate bytes).
func (u StreamUpdate) Marshal() []byte {
	b := make([]byte, SizeofStreamUpdate)
	ne.PutUint64(b[0:], uint64(u.ID))
	b[8] = uint8(u.State)
	ne.PutUint32(b[12:], u.ErrCode)
	ne.PutUint64(b[16:], u.FinalSize)
	return b
}

// UnmarshalStreamUpdate decodes a struct quic_stream_update from the first
// SizeofStreamUpdate bytes of b.
func UnmarshalStreamUpdate(b []byte) (StreamUpdate, error) {
	if err := checkLen(b, SizeofStreamUpdate, "quic_stream_update"); err != nil {
		return StreamUpdate{}, err
	}
	return StreamUpdate{
		ID:        int64(ne.Uint64(b[0:])),
		State:     StreamState(b[8]),
		ErrCode:   ne.Uint32(b[12:]),
		FinalSize: ne.Uint64(b[16:]),
	}, nil
}

// StreamMaxData is struct quic_stream_max_data, the payload of
// QUIC_EVENT_STREAM_MAX_DATA. It is also the Event for it.
type StreamMaxData struct {
	ID      int64  // @0
	MaxData uint64 // @8: the stream's new send limit
}

// Marshal returns m in the kernel layout (SizeofStreamMaxData bytes).
func (m StreamMaxData) Marshal() []byte {
	b := make([]byte, SizeofStreamMaxData)
	ne.PutUint64(b[0:], uint64(m.ID))
	ne.PutUint64(b[8:], m.MaxData)
	return b
}

// UnmarshalStreamMaxData decodes a struct quic_stream_max_data from the first
// SizeofStreamMaxData bytes of b.
func UnmarshalStreamMaxData(b []byte) (StreamMaxData, error) {
	if err := checkLen(b, SizeofStreamMaxData, "quic_stream_max_data"); err != nil {
		return StreamMaxData{}, err
	}
	return StreamMaxData{ID: int64(ne.Uint64(b[0:])), MaxData: ne.Uint64(b[8:])}, nil
}
