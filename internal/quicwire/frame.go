package quicwire

import (
	"errors"
	"fmt"
)

// Frame types (RFC 9000 §19, §12.4; DATAGRAM from RFC 9221 §4).
const (
	TypePadding            = 0x00
	TypePing               = 0x01
	TypeAck                = 0x02
	TypeAckECN             = 0x03
	TypeResetStream        = 0x04
	TypeStopSending        = 0x05
	TypeCrypto             = 0x06
	TypeNewToken           = 0x07
	TypeStream             = 0x08 // 0x08-0x0f: OFF 0x04, LEN 0x02, FIN 0x01
	TypeMaxData            = 0x10
	TypeMaxStreamData      = 0x11
	TypeMaxStreamsBidi     = 0x12
	TypeMaxStreamsUni      = 0x13
	TypeDataBlocked        = 0x14
	TypeStreamDataBlocked  = 0x15
	TypeStreamsBlockedBidi = 0x16
	TypeStreamsBlockedUni  = 0x17
	TypeNewConnectionID    = 0x18
	TypeRetireConnectionID = 0x19
	TypePathChallenge      = 0x1a
	TypePathResponse       = 0x1b
	TypeConnectionClose    = 0x1c // a transport error
	TypeConnectionCloseApp = 0x1d // an application error
	TypeHandshakeDone      = 0x1e
	TypeDatagram           = 0x30 // 0x31: with a Length field
)

// ErrUnknownFrame is returned (wrapped) for a frame type this package does
// not know; RFC 9000 §12.4 makes it a FRAME_ENCODING_ERROR.
var ErrUnknownFrame = errors.New("quicwire: unknown frame type")

// A Frame is one QUIC frame. Append writes its encoding; the encoders write
// whatever values they hold, invalid ones included.
type Frame interface {
	// FrameType is the frame's type as it goes on the wire.
	FrameType() uint64
	// Append appends the frame's encoding to b.
	Append(b []byte) []byte
}

// Padding is a run of Len PADDING bytes (at least 1).
type Padding struct{ Len int }

// Ping is a PING frame.
type Ping struct{}

// AckRange is one range of an ACK frame after the first: Gap and Len as on
// the wire (RFC 9000 §19.3.1).
type AckRange struct{ Gap, Len uint64 }

// ECNCounts are the counts of an ACK frame of type 0x03.
type ECNCounts struct{ ECT0, ECT1, CE uint64 }

// Ack is an ACK frame in its wire form, so that any encoding (overlapping or
// underflowing ranges included) can be built. NewAck builds a valid one from
// packet numbers; Ranges decodes the packet numbers it acknowledges.
type Ack struct {
	Largest    uint64
	Delay      uint64 // in units of 2^ack_delay_exponent microseconds
	FirstRange uint64
	Ranges     []AckRange
	ECN        *ECNCounts // non-nil: type 0x03
}

// ResetStream is a RESET_STREAM frame.
type ResetStream struct{ StreamID, ErrorCode, FinalSize uint64 }

// StopSending is a STOP_SENDING frame.
type StopSending struct{ StreamID, ErrorCode uint64 }

// Crypto is a CRYPTO frame.
type Crypto struct {
	Offset uint64
	Data   []byte
}

// NewToken is a NEW_TOKEN frame.
type NewToken struct{ Token []byte }

// Stream is a STREAM frame. The Offset field is written when Offset is not 0
// or ExplicitOffset is set; the Length field unless NoLength is set (the data
// then runs to the end of the packet).
type Stream struct {
	StreamID       uint64
	Offset         uint64
	Data           []byte
	Fin            bool
	ExplicitOffset bool
	NoLength       bool
}

// MaxData is a MAX_DATA frame.
type MaxData struct{ Max uint64 }

// MaxStreamData is a MAX_STREAM_DATA frame.
type MaxStreamData struct{ StreamID, Max uint64 }

// MaxStreams is a MAX_STREAMS frame (Uni: type 0x13).
type MaxStreams struct {
	Uni bool
	Max uint64
}

// DataBlocked is a DATA_BLOCKED frame.
type DataBlocked struct{ Limit uint64 }

// StreamDataBlocked is a STREAM_DATA_BLOCKED frame.
type StreamDataBlocked struct{ StreamID, Limit uint64 }

// StreamsBlocked is a STREAMS_BLOCKED frame (Uni: type 0x17).
type StreamsBlocked struct {
	Uni   bool
	Limit uint64
}

// NewConnectionID is a NEW_CONNECTION_ID frame. The Length field is
// len(ConnID); a ConnID over 255 bytes cannot be encoded.
type NewConnectionID struct {
	Seq, RetirePriorTo uint64
	ConnID             []byte
	ResetToken         [16]byte
}

// RetireConnectionID is a RETIRE_CONNECTION_ID frame.
type RetireConnectionID struct{ Seq uint64 }

// PathChallenge is a PATH_CHALLENGE frame.
type PathChallenge struct{ Data [8]byte }

// PathResponse is a PATH_RESPONSE frame.
type PathResponse struct{ Data [8]byte }

// ConnectionClose is a CONNECTION_CLOSE frame: type 0x1c (with the frame
// type that caused the error) unless App is set (type 0x1d).
type ConnectionClose struct {
	App       bool
	ErrorCode uint64
	Offending uint64 // 0x1c only: the type of the frame that caused the error
	Reason    []byte
}

// HandshakeDone is a HANDSHAKE_DONE frame.
type HandshakeDone struct{}

// Datagram is a DATAGRAM frame (RFC 9221): type 0x31 with a Length field
// unless NoLength is set (type 0x30).
type Datagram struct {
	Data     []byte
	NoLength bool
}

// Raw is any bytes, appended as they are: an unknown frame type, a truncated
// frame, or a frame no encoder here would write.
type Raw []byte

// FrameType implements Frame.
func (Padding) FrameType() uint64 { return TypePadding }

// Append implements Frame.
func (f Padding) Append(b []byte) []byte {
	n := max(f.Len, 1)
	return append(b, make([]byte, n)...)
}

// FrameType implements Frame.
func (Ping) FrameType() uint64 { return TypePing }

// Append implements Frame.
func (Ping) Append(b []byte) []byte { return append(b, TypePing) }

// FrameType implements Frame.
func (f *Ack) FrameType() uint64 {
	if f.ECN != nil {
		return TypeAckECN
	}
	return TypeAck
}

// Append implements Frame.
func (f *Ack) Append(b []byte) []byte {
	b = AppendVarint(b, f.FrameType())
	b = AppendVarint(b, f.Largest)
	b = AppendVarint(b, f.Delay)
	b = AppendVarint(b, uint64(len(f.Ranges)))
	b = AppendVarint(b, f.FirstRange)
	for _, r := range f.Ranges {
		b = AppendVarint(b, r.Gap)
		b = AppendVarint(b, r.Len)
	}
	if f.ECN != nil {
		b = AppendVarint(b, f.ECN.ECT0)
		b = AppendVarint(b, f.ECN.ECT1)
		b = AppendVarint(b, f.ECN.CE)
	}
	return b
}

// PNRange is an inclusive range of packet numbers.
type PNRange struct{ Smallest, Largest uint64 }

// NewAck builds a valid ACK frame for ranges, which must be in descending
// order, not overlapping nor adjacent (as a receiver keeps them).
func NewAck(delay uint64, ranges ...PNRange) *Ack {
	if len(ranges) == 0 {
		panic("quicwire: NewAck without a range")
	}
	f := &Ack{Largest: ranges[0].Largest, Delay: delay, FirstRange: ranges[0].Largest - ranges[0].Smallest}
	prev := ranges[0].Smallest
	for _, r := range ranges[1:] {
		f.Ranges = append(f.Ranges, AckRange{Gap: prev - r.Largest - 2, Len: r.Largest - r.Smallest})
		prev = r.Smallest
	}
	return f
}

// Acked returns the packet number ranges the frame acknowledges, largest
// first, or an error if a range would go below packet number 0 (a
// FRAME_ENCODING_ERROR, RFC 9000 §19.3.1).
func (f *Ack) Acked() ([]PNRange, error) {
	if f.FirstRange > f.Largest {
		return nil, fmt.Errorf("%w: ACK: first range %d below packet number 0 (largest %d)", ErrMalformed, f.FirstRange, f.Largest)
	}
	out := []PNRange{{f.Largest - f.FirstRange, f.Largest}}
	smallest := f.Largest - f.FirstRange
	for i, r := range f.Ranges {
		if r.Gap+2 > smallest || r.Len > smallest-r.Gap-2 {
			return nil, fmt.Errorf("%w: ACK: range %d (gap %d, length %d) below packet number 0", ErrMalformed, i+1, r.Gap, r.Len)
		}
		largest := smallest - r.Gap - 2
		smallest = largest - r.Len
		out = append(out, PNRange{smallest, largest})
	}
	return out, nil
}

// FrameType implements Frame.
func (ResetStream) FrameType() uint64 { return TypeResetStream }

// Append implements Frame.
func (f ResetStream) Append(b []byte) []byte {
	return appendVarints(b, TypeResetStream, f.StreamID, f.ErrorCode, f.FinalSize)
}

// FrameType implements Frame.
func (StopSending) FrameType() uint64 { return TypeStopSending }

// Append implements Frame.
func (f StopSending) Append(b []byte) []byte {
	return appendVarints(b, TypeStopSending, f.StreamID, f.ErrorCode)
}

// FrameType implements Frame.
func (Crypto) FrameType() uint64 { return TypeCrypto }

// Append implements Frame.
func (f Crypto) Append(b []byte) []byte {
	b = appendVarints(b, TypeCrypto, f.Offset, uint64(len(f.Data)))
	return append(b, f.Data...)
}

// FrameType implements Frame.
func (NewToken) FrameType() uint64 { return TypeNewToken }

// Append implements Frame.
func (f NewToken) Append(b []byte) []byte {
	b = appendVarints(b, TypeNewToken, uint64(len(f.Token)))
	return append(b, f.Token...)
}

// FrameType implements Frame.
func (f Stream) FrameType() uint64 {
	t := uint64(TypeStream)
	if f.Offset != 0 || f.ExplicitOffset {
		t |= 0x04
	}
	if !f.NoLength {
		t |= 0x02
	}
	if f.Fin {
		t |= 0x01
	}
	return t
}

// Append implements Frame.
func (f Stream) Append(b []byte) []byte {
	t := f.FrameType()
	b = appendVarints(b, t, f.StreamID)
	if t&0x04 != 0 {
		b = AppendVarint(b, f.Offset)
	}
	if t&0x02 != 0 {
		b = AppendVarint(b, uint64(len(f.Data)))
	}
	return append(b, f.Data...)
}

// FrameType implements Frame.
func (MaxData) FrameType() uint64 { return TypeMaxData }

// Append implements Frame.
func (f MaxData) Append(b []byte) []byte { return appendVarints(b, TypeMaxData, f.Max) }

// FrameType implements Frame.
func (MaxStreamData) FrameType() uint64 { return TypeMaxStreamData }

// Append implements Frame.
func (f MaxStreamData) Append(b []byte) []byte {
	return appendVarints(b, TypeMaxStreamData, f.StreamID, f.Max)
}

// FrameType implements Frame.
func (f MaxStreams) FrameType() uint64 { return uniType(TypeMaxStreamsBidi, f.Uni) }

// Append implements Frame.
func (f MaxStreams) Append(b []byte) []byte { return appendVarints(b, f.FrameType(), f.Max) }

// FrameType implements Frame.
func (DataBlocked) FrameType() uint64 { return TypeDataBlocked }

// Append implements Frame.
func (f DataBlocked) Append(b []byte) []byte { return appendVarints(b, TypeDataBlocked, f.Limit) }

// FrameType implements Frame.
func (StreamDataBlocked) FrameType() uint64 { return TypeStreamDataBlocked }

// Append implements Frame.
func (f StreamDataBlocked) Append(b []byte) []byte {
	return appendVarints(b, TypeStreamDataBlocked, f.StreamID, f.Limit)
}

// FrameType implements Frame.
func (f StreamsBlocked) FrameType() uint64 { return uniType(TypeStreamsBlockedBidi, f.Uni) }

// Append implements Frame.
func (f StreamsBlocked) Append(b []byte) []byte { return appendVarints(b, f.FrameType(), f.Limit) }

// FrameType implements Frame.
func (NewConnectionID) FrameType() uint64 { return TypeNewConnectionID }

// Append implements Frame.
func (f NewConnectionID) Append(b []byte) []byte {
	if len(f.ConnID) > 255 {
		panic(fmt.Sprintf("quicwire: NEW_CONNECTION_ID with a %d-byte connection ID (at most 255 encode)", len(f.ConnID)))
	}
	b = appendVarints(b, TypeNewConnectionID, f.Seq, f.RetirePriorTo)
	b = append(b, byte(len(f.ConnID)))
	b = append(b, f.ConnID...)
	return append(b, f.ResetToken[:]...)
}

// FrameType implements Frame.
func (RetireConnectionID) FrameType() uint64 { return TypeRetireConnectionID }

// Append implements Frame.
func (f RetireConnectionID) Append(b []byte) []byte {
	return appendVarints(b, TypeRetireConnectionID, f.Seq)
}

// FrameType implements Frame.
func (PathChallenge) FrameType() uint64 { return TypePathChallenge }

// Append implements Frame.
func (f PathChallenge) Append(b []byte) []byte {
	return append(append(b, TypePathChallenge), f.Data[:]...)
}

// FrameType implements Frame.
func (PathResponse) FrameType() uint64 { return TypePathResponse }

// Append implements Frame.
func (f PathResponse) Append(b []byte) []byte {
	return append(append(b, TypePathResponse), f.Data[:]...)
}

// FrameType implements Frame.
func (f ConnectionClose) FrameType() uint64 {
	if f.App {
		return TypeConnectionCloseApp
	}
	return TypeConnectionClose
}

// Append implements Frame.
func (f ConnectionClose) Append(b []byte) []byte {
	b = appendVarints(b, f.FrameType(), f.ErrorCode)
	if !f.App {
		b = AppendVarint(b, f.Offending)
	}
	b = AppendVarint(b, uint64(len(f.Reason)))
	return append(b, f.Reason...)
}

// FrameType implements Frame.
func (HandshakeDone) FrameType() uint64 { return TypeHandshakeDone }

// Append implements Frame.
func (HandshakeDone) Append(b []byte) []byte { return append(b, TypeHandshakeDone) }

// FrameType implements Frame.
func (f Datagram) FrameType() uint64 {
	if f.NoLength {
		return TypeDatagram
	}
	return TypeDatagram | 1
}

// Append implements Frame.
func (f Datagram) Append(b []byte) []byte {
	b = AppendVarint(b, f.FrameType())
	if !f.NoLength {
		b = AppendVarint(b, uint64(len(f.Data)))
	}
	return append(b, f.Data...)
}

// FrameType implements Frame: the first byte's varint, or PADDING for none.
func (f Raw) FrameType() uint64 {
	v, _, err := ReadVarint(f)
	if err != nil {
		return TypePadding
	}
	return v
}

// Append implements Frame.
func (f Raw) Append(b []byte) []byte { return append(b, f...) }

func uniType(bidi uint64, uni bool) uint64 {
	if uni {
		return bidi + 1
	}
	return bidi
}

func appendVarints(b []byte, vs ...uint64) []byte {
	for _, v := range vs {
		b = AppendVarint(b, v)
	}
	return b
}

// AppendFrames appends the encodings of frames.
func AppendFrames(b []byte, frames ...Frame) []byte {
	for _, f := range frames {
		b = f.Append(b)
	}
	return b
}

// IsAckEliciting reports whether a frame asks for an acknowledgment: every
// type but ACK, PADDING and CONNECTION_CLOSE (RFC 9002 §2).
func IsAckEliciting(t uint64) bool {
	switch t {
	case TypeAck, TypeAckECN, TypePadding, TypeConnectionClose, TypeConnectionCloseApp:
		return false
	}
	return true
}
