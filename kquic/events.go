package kquic

import (
	"kquic.dev/internal/quicabi"
)

// EventType names a kind of event the kernel reports about a connection.
type EventType uint8

// The kernel's events. Ask for them with [Config.Events] and read them with
// [Conn.ReceiveEvent].
const (
	EventStreamUpdate     = EventType(quicabi.QUIC_EVENT_STREAM_UPDATE)        // *StreamUpdateEvent
	EventStreamMaxData    = EventType(quicabi.QUIC_EVENT_STREAM_MAX_DATA)      // *StreamMaxDataEvent
	EventMaxStreams       = EventType(quicabi.QUIC_EVENT_STREAM_MAX_STREAM)    // *MaxStreamsEvent
	EventConnectionID     = EventType(quicabi.QUIC_EVENT_CONNECTION_ID)        // *ConnectionIDEvent
	EventConnectionClose  = EventType(quicabi.QUIC_EVENT_CONNECTION_CLOSE)     // *ConnectionCloseEvent
	EventMigration        = EventType(quicabi.QUIC_EVENT_CONNECTION_MIGRATION) // *MigrationEvent
	EventKeyUpdate        = EventType(quicabi.QUIC_EVENT_KEY_UPDATE)           // *KeyUpdateEvent
	EventNewToken         = EventType(quicabi.QUIC_EVENT_NEW_TOKEN)            // *NewTokenEvent
	EventNewSessionTicket = EventType(quicabi.QUIC_EVENT_NEW_SESSION_TICKET)   // *NewSessionTicketEvent
)

// String returns the kernel's name of t without the QUIC_EVENT_ prefix.
func (t EventType) String() string { return quicabi.EventType(t).String() }

// Event is one of the *...Event types below.
type Event interface{ Type() EventType }

// StreamState is a state of a stream's send or receive side (RFC 9000 §3).
type StreamState = quicabi.StreamState

// StreamUpdateEvent reports a stream changing state: all data acknowledged
// or received, a reset sent or received. ErrorCode is set for resets,
// FinalSize for the final states.
type StreamUpdateEvent struct {
	StreamID  int64
	State     StreamState
	ErrorCode StreamErrorCode
	FinalSize uint64
}

// StreamMaxDataEvent reports the peer raising a stream's flow control limit.
type StreamMaxDataEvent struct {
	StreamID int64
	MaxData  uint64
}

// MaxStreamsEvent reports the peer allowing more streams: MaxStreamID is
// the highest stream ID it now allows (type bits included).
type MaxStreamsEvent struct{ MaxStreamID uint64 }

// Count is the number of streams of that type now allowed.
func (e *MaxStreamsEvent) Count() uint64 { return e.MaxStreamID>>2 + 1 }

// Uni reports whether the limit is for unidirectional streams.
func (e *MaxStreamsEvent) Uni() bool { return e.MaxStreamID&quicabi.QUIC_STREAM_TYPE_UNI_MASK != 0 }

// ConnectionIDEvent reports connection IDs retired: ours by the peer
// (Dest false) or the peer's by us (Dest true). Active is the number in use,
// PriorTo the lowest number still live.
type ConnectionIDEvent struct {
	Dest            bool
	Active, PriorTo uint32
}

// ConnectionCloseEvent reports the connection closing: the peer's
// CONNECTION_CLOSE, a local protocol error, an idle timeout (all zero) or a
// stateless reset. Application, ErrorCode and TransportErrorCode are read
// as in [CloseError]: a record with frame type 0 is an application's.
type ConnectionCloseEvent struct {
	Application        bool
	ErrorCode          ApplicationErrorCode
	TransportErrorCode TransportErrorCode
	FrameType          uint8
	Reason             string
}

// MigrationEvent reports a validated new path: our own migration (Local)
// or the peer's.
type MigrationEvent struct{ Local bool }

// KeyUpdateEvent reports a key update the peer started; Phase is the new
// key phase.
type KeyUpdateEvent struct{ Phase uint8 }

// NewTokenEvent carries an address validation token from the server, for
// [Config.Token] of a later connection.
type NewTokenEvent struct{ Token []byte }

// NewSessionTicketEvent carries the server's NewSessionTicket message.
type NewSessionTicketEvent struct{ Ticket []byte }

// Type implements Event.
func (*StreamUpdateEvent) Type() EventType { return EventStreamUpdate }

// Type implements Event.
func (*StreamMaxDataEvent) Type() EventType { return EventStreamMaxData }

// Type implements Event.
func (*MaxStreamsEvent) Type() EventType { return EventMaxStreams }

// Type implements Event.
func (*ConnectionIDEvent) Type() EventType { return EventConnectionID }

// Type implements Event.
func (*ConnectionCloseEvent) Type() EventType { return EventConnectionClose }

// Type implements Event.
func (*MigrationEvent) Type() EventType { return EventMigration }

// Type implements Event.
func (*KeyUpdateEvent) Type() EventType { return EventKeyUpdate }

// Type implements Event.
func (*NewTokenEvent) Type() EventType { return EventNewToken }

// Type implements Event.
func (*NewSessionTicketEvent) Type() EventType { return EventNewSessionTicket }
