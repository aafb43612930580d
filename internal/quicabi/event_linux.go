package quicabi

import (
	"errors"
	"fmt"
)

// ErrUnknownEvent is wrapped by the error DecodeEvent returns for an event
// type it does not know.
var ErrUnknownEvent = errors.New("unknown event type")

// Event is a decoded event notification: a message received with
// MSG_QUIC_NOTIFICATION in msg_flags. Its dynamic type is one of
// StreamUpdate, StreamMaxData, MaxStreams, ConnectionID, ConnectionClose,
// Migration, KeyUpdate, NewToken or NewSessionTicket.
type Event interface {
	// Type returns the kernel event type.
	Type() EventType
}

// Type returns QUIC_EVENT_STREAM_UPDATE.
func (StreamUpdate) Type() EventType { return QUIC_EVENT_STREAM_UPDATE }

// Type returns QUIC_EVENT_STREAM_MAX_DATA.
func (StreamMaxData) Type() EventType { return QUIC_EVENT_STREAM_MAX_DATA }

// MaxStreams is the QUIC_EVENT_STREAM_MAX_STREAM event: the peer raised its
// limit on the streams we may open (a MAX_STREAMS frame).
type MaxStreams struct {
	// MaxStreamID is the highest stream ID now allowed, type bits included
	// (for example 488 for client bidirectional streams).
	MaxStreamID uint64
}

// Type returns QUIC_EVENT_STREAM_MAX_STREAM.
func (MaxStreams) Type() EventType { return QUIC_EVENT_STREAM_MAX_STREAM }

// Count returns the number of streams of this type the peer now allows:
// (MaxStreamID >> 2) + 1.
func (m MaxStreams) Count() uint64 { return m.MaxStreamID>>2 + 1 }

// Uni reports whether the limit is for unidirectional streams (else
// bidirectional).
func (m MaxStreams) Uni() bool { return m.MaxStreamID&QUIC_STREAM_TYPE_UNI_MASK != 0 }

// ConnectionID is the QUIC_EVENT_CONNECTION_ID event: a connection ID was
// retired. With Dest set we retired one of the peer's IDs, else the peer
// retired one of ours. Active is the sequence number now in use and PriorTo
// the lowest one still live.
type ConnectionID ConnectionIDInfo

// Type returns QUIC_EVENT_CONNECTION_ID.
func (ConnectionID) Type() EventType { return QUIC_EVENT_CONNECTION_ID }

// Type returns QUIC_EVENT_CONNECTION_CLOSE.
func (ConnectionClose) Type() EventType { return QUIC_EVENT_CONNECTION_CLOSE }

// Migration is the QUIC_EVENT_CONNECTION_MIGRATION event: a new path was
// validated. Read the addresses with getsockname/getpeername.
type Migration struct {
	Local bool // we migrated (else the peer did)
}

// Type returns QUIC_EVENT_CONNECTION_MIGRATION.
func (Migration) Type() EventType { return QUIC_EVENT_CONNECTION_MIGRATION }

// KeyUpdate is the QUIC_EVENT_KEY_UPDATE event: the peer started a key update.
type KeyUpdate struct {
	Phase uint8 // the new key phase
}

// Type returns QUIC_EVENT_KEY_UPDATE.
func (KeyUpdate) Type() EventType { return QUIC_EVENT_KEY_UPDATE }

// NewToken is the QUIC_EVENT_NEW_TOKEN event: the server sent a token for
// later connections.
type NewToken struct {
	Token []byte
}

// Type returns QUIC_EVENT_NEW_TOKEN.
func (NewToken) Type() EventType { return QUIC_EVENT_NEW_TOKEN }

// NewSessionTicket is the QUIC_EVENT_NEW_SESSION_TICKET event: the server sent
// a TLS NewSessionTicket.
type NewSessionTicket struct {
	// Message is the whole handshake message: type 4, 3-byte length, body.
	Message []byte
}

// Type returns QUIC_EVENT_NEW_SESSION_TICKET.
func (NewSessionTicket) Type() EventType { return QUIC_EVENT_NEW_SESSION_TICKET }

// DecodeEvent decodes a whole event notification b (the message ends with
// MSG_EOR): byte 0 is the event type and the payload starts at byte 1, so it
// is unaligned. Bytes beyond a fixed-size payload are ignored. Byte slices in
// the result are copies. It returns an error, wrapping ErrUnknownEvent or
// ErrTruncated, for an unknown type or a payload that is too short.
func DecodeEvent(b []byte) (Event, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("quicabi: decoding event: empty message: %w", ErrTruncated)
	}
	t, p := EventType(b[0]), b[1:]
	need := 0
	switch t {
	case QUIC_EVENT_STREAM_UPDATE:
		need = SizeofStreamUpdate
	case QUIC_EVENT_STREAM_MAX_DATA:
		need = SizeofStreamMaxData
	case QUIC_EVENT_STREAM_MAX_STREAM:
		need = 8
	case QUIC_EVENT_CONNECTION_ID:
		need = SizeofConnectionIDInfo
	case QUIC_EVENT_CONNECTION_CLOSE:
		need = SizeofConnectionClose
	case QUIC_EVENT_CONNECTION_MIGRATION, QUIC_EVENT_KEY_UPDATE:
		need = 1
	case QUIC_EVENT_NEW_TOKEN, QUIC_EVENT_NEW_SESSION_TICKET:
	default:
		return nil, fmt.Errorf("quicabi: decoding event: type %d: %w", uint8(t), ErrUnknownEvent)
	}
	if len(p) < need {
		return nil, fmt.Errorf("quicabi: decoding %v event: payload is %d bytes, need %d: %w", t, len(p), need, ErrTruncated)
	}
	switch t {
	case QUIC_EVENT_STREAM_UPDATE:
		return UnmarshalStreamUpdate(p)
	case QUIC_EVENT_STREAM_MAX_DATA:
		return UnmarshalStreamMaxData(p)
	case QUIC_EVENT_STREAM_MAX_STREAM:
		return MaxStreams{MaxStreamID: ne.Uint64(p)}, nil
	case QUIC_EVENT_CONNECTION_ID:
		c, err := UnmarshalConnectionIDInfo(p)
		return ConnectionID(c), err
	case QUIC_EVENT_CONNECTION_CLOSE:
		return UnmarshalConnectionClose(p)
	case QUIC_EVENT_CONNECTION_MIGRATION:
		return Migration{Local: p[0] != 0}, nil
	case QUIC_EVENT_KEY_UPDATE:
		return KeyUpdate{Phase: p[0]}, nil
	case QUIC_EVENT_NEW_TOKEN:
		return NewToken{Token: append([]byte{}, p...)}, nil
	default: // QUIC_EVENT_NEW_SESSION_TICKET
		return NewSessionTicket{Message: append([]byte{}, p...)}, nil
	}
}
