package quicwire

import "fmt"

// ParseFrame decodes the frame at the start of b and returns it with the
// number of bytes it took. A run of PADDING bytes is one Padding. Byte slices
// in the frame (data, tokens, reasons) alias b.
func ParseFrame(b []byte) (Frame, int, error) {
	t, n, err := ReadVarint(b)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: frame type: truncated", ErrMalformed)
	}
	r := &reader{b: b, off: n, what: frameName(t)}
	var f Frame
	switch {
	case t == TypePadding:
		i := n
		for i < len(b) && b[i] == 0 {
			i++
		}
		return Padding{Len: i}, i, nil
	case t == TypePing:
		f = Ping{}
	case t == TypeAck || t == TypeAckECN:
		f = r.ack(t == TypeAckECN)
	case t == TypeResetStream:
		f = ResetStream{StreamID: r.varint("stream ID"), ErrorCode: r.varint("error code"), FinalSize: r.varint("final size")}
	case t == TypeStopSending:
		f = StopSending{StreamID: r.varint("stream ID"), ErrorCode: r.varint("error code")}
	case t == TypeCrypto:
		c := Crypto{Offset: r.varint("offset")}
		c.Data = r.bytes("data", r.varint("length"))
		f = c
	case t == TypeNewToken:
		f = NewToken{Token: r.bytes("token", r.varint("length"))}
	case t >= TypeStream && t <= TypeStream|0x07:
		f = r.stream(t)
	case t == TypeMaxData:
		f = MaxData{Max: r.varint("maximum data")}
	case t == TypeMaxStreamData:
		f = MaxStreamData{StreamID: r.varint("stream ID"), Max: r.varint("maximum stream data")}
	case t == TypeMaxStreamsBidi || t == TypeMaxStreamsUni:
		f = MaxStreams{Uni: t == TypeMaxStreamsUni, Max: r.varint("maximum streams")}
	case t == TypeDataBlocked:
		f = DataBlocked{Limit: r.varint("maximum data")}
	case t == TypeStreamDataBlocked:
		f = StreamDataBlocked{StreamID: r.varint("stream ID"), Limit: r.varint("maximum stream data")}
	case t == TypeStreamsBlockedBidi || t == TypeStreamsBlockedUni:
		f = StreamsBlocked{Uni: t == TypeStreamsBlockedUni, Limit: r.varint("maximum streams")}
	case t == TypeNewConnectionID:
		c := NewConnectionID{Seq: r.varint("sequence number"), RetirePriorTo: r.varint("retire prior to")}
		c.ConnID = r.bytes("connection ID", uint64(r.byte1("length")))
		copy(c.ResetToken[:], r.bytes("stateless reset token", 16))
		f = c
	case t == TypeRetireConnectionID:
		f = RetireConnectionID{Seq: r.varint("sequence number")}
	case t == TypePathChallenge:
		var c PathChallenge
		copy(c.Data[:], r.bytes("data", 8))
		f = c
	case t == TypePathResponse:
		var c PathResponse
		copy(c.Data[:], r.bytes("data", 8))
		f = c
	case t == TypeConnectionClose || t == TypeConnectionCloseApp:
		f = r.connectionClose(t == TypeConnectionCloseApp)
	case t == TypeHandshakeDone:
		f = HandshakeDone{}
	case t == TypeDatagram || t == TypeDatagram|1:
		d := Datagram{NoLength: t == TypeDatagram}
		if d.NoLength {
			d.Data = r.rest()
		} else {
			d.Data = r.bytes("data", r.varint("length"))
		}
		f = d
	default:
		return nil, 0, fmt.Errorf("%w 0x%x", ErrUnknownFrame, t)
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	return f, r.off, nil
}

// ack reads an ACK frame's fields (with the ECN counts).
func (r *reader) ack(ecn bool) *Ack {
	a := &Ack{Largest: r.varint("largest"), Delay: r.varint("delay")}
	count := r.varint("range count")
	a.FirstRange = r.varint("first range")
	// Each range takes at least 2 bytes: a count beyond that is a lie.
	if count > uint64(len(r.b)-r.off)/2 {
		r.fail("range count %d, %d bytes left", count, len(r.b)-r.off)
	}
	for i := uint64(0); i < count && r.err == nil; i++ {
		a.Ranges = append(a.Ranges, AckRange{Gap: r.varint("gap"), Len: r.varint("range")})
	}
	if ecn {
		a.ECN = &ECNCounts{ECT0: r.varint("ECT0"), ECT1: r.varint("ECT1"), CE: r.varint("ECN-CE")}
	}
	return a
}

// stream reads a STREAM frame of type t's fields: its flags say which.
func (r *reader) stream(t uint64) Stream {
	s := Stream{StreamID: r.varint("stream ID"), Fin: t&0x01 != 0}
	if t&0x04 != 0 {
		s.Offset = r.varint("offset")
		s.ExplicitOffset = true
	}
	if t&0x02 != 0 {
		s.Data = r.bytes("data", r.varint("length"))
	} else {
		s.Data = r.rest()
		s.NoLength = true
	}
	return s
}

// connectionClose reads a CONNECTION_CLOSE frame's fields (the
// application's has no frame type).
func (r *reader) connectionClose(app bool) ConnectionClose {
	c := ConnectionClose{App: app, ErrorCode: r.varint("error code")}
	if !c.App {
		c.Offending = r.varint("frame type")
	}
	c.Reason = r.bytes("reason phrase", r.varint("reason length"))
	return c
}

// ParseFrames decodes every frame of a packet's payload. On an error it
// returns the frames before it.
func ParseFrames(b []byte) ([]Frame, error) {
	var out []Frame
	for len(b) > 0 {
		f, n, err := ParseFrame(b)
		if err != nil {
			return out, err
		}
		out = append(out, f)
		b = b[n:]
	}
	return out, nil
}

// frameName is a frame type's name as RFC 9000 §19 spells it.
func frameName(t uint64) string {
	switch {
	case t == TypePadding:
		return "PADDING"
	case t == TypePing:
		return "PING"
	case t == TypeAck || t == TypeAckECN:
		return "ACK"
	case t == TypeResetStream:
		return "RESET_STREAM"
	case t == TypeStopSending:
		return "STOP_SENDING"
	case t == TypeCrypto:
		return "CRYPTO"
	case t == TypeNewToken:
		return "NEW_TOKEN"
	case t >= TypeStream && t <= TypeStream|7:
		return "STREAM"
	case t == TypeMaxData:
		return "MAX_DATA"
	case t == TypeMaxStreamData:
		return "MAX_STREAM_DATA"
	case t == TypeMaxStreamsBidi || t == TypeMaxStreamsUni:
		return "MAX_STREAMS"
	case t == TypeDataBlocked:
		return "DATA_BLOCKED"
	case t == TypeStreamDataBlocked:
		return "STREAM_DATA_BLOCKED"
	case t == TypeStreamsBlockedBidi || t == TypeStreamsBlockedUni:
		return "STREAMS_BLOCKED"
	case t == TypeNewConnectionID:
		return "NEW_CONNECTION_ID"
	case t == TypeRetireConnectionID:
		return "RETIRE_CONNECTION_ID"
	case t == TypePathChallenge:
		return "PATH_CHALLENGE"
	case t == TypePathResponse:
		return "PATH_RESPONSE"
	case t == TypeConnectionClose || t == TypeConnectionCloseApp:
		return "CONNECTION_CLOSE"
	case t == TypeHandshakeDone:
		return "HANDSHAKE_DONE"
	case t == TypeDatagram || t == TypeDatagram|1:
		return "DATAGRAM"
	}
	return fmt.Sprintf("frame 0x%x", t)
}

// FrameName is the RFC's name of a frame type ("STREAM", "ACK", ...), or
// "frame 0x…" for an unknown one.
func FrameName(t uint64) string { return frameName(t) }
