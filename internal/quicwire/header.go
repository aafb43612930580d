package quicwire

import (
	"encoding/binary"
	"fmt"
)

// PacketType is a QUIC packet's type, independent of the version's encoding
// of it.
type PacketType int

// Packet types.
const (
	Initial PacketType = iota
	ZeroRTT
	Handshake
	Retry
	OneRTT
	VersionNegotiation
)

func (t PacketType) String() string {
	switch t {
	case Initial:
		return "Initial"
	case ZeroRTT:
		return "0-RTT"
	case Handshake:
		return "Handshake"
	case Retry:
		return "Retry"
	case OneRTT:
		return "1-RTT"
	case VersionNegotiation:
		return "Version Negotiation"
	}
	return fmt.Sprintf("PacketType(%d)", int(t))
}

// typeBits is the long header's two type bits for t in version v (RFC 9000
// §17.2, RFC 9369 §3.2).
func typeBits(v uint32, t PacketType) byte {
	if v == Version2 {
		return [...]byte{Initial: 1, ZeroRTT: 2, Handshake: 3, Retry: 0}[t]
	}
	return byte(t)
}

func typeOf(v uint32, bits byte) PacketType {
	if v == Version2 {
		return [...]PacketType{Retry, Initial, ZeroRTT, Handshake}[bits]
	}
	return PacketType(bits)
}

// Header is a packet's header. On encode, PNLen 0 means 4 bytes; Reserved
// are the reserved bits as written before header protection (RFC 9000 makes
// anything but 0 a PROTOCOL_VIOLATION), and NoFixedBit clears the fixed bit.
// On decode the fields after header protection (PacketNumber, PNLen,
// KeyPhase, Reserved) are set by OpenPacket.
type Header struct {
	Type      PacketType
	Version   uint32
	DstConnID []byte
	SrcConnID []byte
	Token     []byte   // Initial and Retry
	RetryTag  [16]byte // Retry
	Versions  []uint32 // Version Negotiation

	PacketNumber uint64
	PNLen        int
	KeyPhase     bool
	Spin         bool
	Reserved     byte
	NoFixedBit   bool
	Length       uint64 // long headers with a Length field, as decoded
}

// IsLong reports whether the header is a long one.
func (h *Header) IsLong() bool { return h.Type != OneRTT }

// appendHeader appends the unprotected header of a packet whose encrypted
// payload takes payloadLen bytes, and returns it with the packet number's
// offset.
func (h *Header) appendHeader(b []byte, pnLen, payloadLen int) ([]byte, int) {
	fixed := byte(0x40)
	if h.NoFixedBit {
		fixed = 0
	}
	if h.Type == OneRTT {
		first := fixed | (h.Reserved&3)<<3 | byte(pnLen-1)
		if h.Spin {
			first |= 0x20
		}
		if h.KeyPhase {
			first |= 0x04
		}
		b = append(b, first)
		b = append(b, h.DstConnID...)
		return b, len(b)
	}
	b = append(b, 0x80|fixed|typeBits(h.Version, h.Type)<<4|(h.Reserved&3)<<2|byte(pnLen-1))
	b = binary.BigEndian.AppendUint32(b, h.Version)
	b = append(b, byte(len(h.DstConnID)))
	b = append(b, h.DstConnID...)
	b = append(b, byte(len(h.SrcConnID)))
	b = append(b, h.SrcConnID...)
	if h.Type == Initial {
		b = AppendVarint(b, uint64(len(h.Token)))
		b = append(b, h.Token...)
	}
	length := uint64(pnLen + payloadLen)
	if length < 1<<14 {
		b = AppendVarintLen(b, length, 2)
	} else {
		b = AppendVarint(b, length)
	}
	return b, len(b)
}

// AppendPacket appends a protected packet: the header h (Initial, 0-RTT,
// Handshake or 1-RTT) with packet number pn truncated to h.PNLen bytes, and
// payload (frames) encrypted with k. A payload too short to sample for
// header protection is padded with PADDING.
func AppendPacket(b []byte, h *Header, pn uint64, payload []byte, k *Keys) []byte {
	if h.Type == Retry || h.Type == VersionNegotiation {
		panic("quicwire: AppendPacket of a " + h.Type.String() + " packet; use AppendRetry or AppendVersionNegotiation")
	}
	pnLen := h.PNLen
	if pnLen == 0 {
		pnLen = 4
	}
	if min := 4 - pnLen; len(payload) < min {
		payload = append(append([]byte(nil), payload...), make([]byte, min-len(payload))...)
	}
	start := len(b)
	b, pnOff := h.appendHeader(b, pnLen, len(payload)+k.Overhead())
	pnOff -= start
	for i := pnLen - 1; i >= 0; i-- {
		b = append(b, byte(pn>>(8*i)))
	}
	hdr := b[start:]
	b = k.SealPayload(b, pn, hdr, payload)
	pkt := b[start:]
	mask := k.HeaderMask(pkt[pnOff+4 : pnOff+20])
	if h.Type == OneRTT {
		pkt[0] ^= mask[0] & 0x1f
	} else {
		pkt[0] ^= mask[0] & 0x0f
	}
	for i := 0; i < pnLen; i++ {
		pkt[pnOff+i] ^= mask[1+i]
	}
	return b
}

// AppendRetry appends a Retry packet with its integrity tag computed for
// odcid, the destination connection ID of the client's Initial.
func AppendRetry(b []byte, h *Header, odcid []byte) []byte {
	start := len(b)
	b = append(b, 0xc0|typeBits(h.Version, Retry)<<4|h.Reserved&0x0f)
	b = binary.BigEndian.AppendUint32(b, h.Version)
	b = append(b, byte(len(h.DstConnID)))
	b = append(b, h.DstConnID...)
	b = append(b, byte(len(h.SrcConnID)))
	b = append(b, h.SrcConnID...)
	b = append(b, h.Token...)
	tag := RetryIntegrityTag(h.Version, odcid, b[start:])
	return append(b, tag[:]...)
}

// AppendVersionNegotiation appends a Version Negotiation packet listing
// h.Versions.
func AppendVersionNegotiation(b []byte, h *Header) []byte {
	b = append(b, 0x80|h.Reserved&0x7f)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = append(b, byte(len(h.DstConnID)))
	b = append(b, h.DstConnID...)
	b = append(b, byte(len(h.SrcConnID)))
	b = append(b, h.SrcConnID...)
	for _, v := range h.Versions {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// ParseHeader decodes the header of the first packet in b, up to its packet
// number, which header protection hides. shortDCIDLen is the length of the
// connection IDs the receiver issued (short headers do not carry it). It
// returns the packet number's offset and the packet's length in b (the rest
// of b for short headers, Retry and Version Negotiation).
func ParseHeader(b []byte, shortDCIDLen int) (h *Header, pnOffset, n int, err error) {
	if len(b) == 0 {
		return nil, 0, 0, fmt.Errorf("%w: packet: empty", ErrMalformed)
	}
	h = &Header{NoFixedBit: b[0]&0x40 == 0}
	if b[0]&0x80 == 0 {
		h.Type = OneRTT
		if len(b) < 1+shortDCIDLen {
			return nil, 0, 0, fmt.Errorf("%w: short header: %d bytes, connection ID of %d", ErrMalformed, len(b), shortDCIDLen)
		}
		h.Spin = b[0]&0x20 != 0
		h.DstConnID = b[1 : 1+shortDCIDLen]
		return h, 1 + shortDCIDLen, len(b), nil
	}
	r := &reader{b: b, off: 1, what: "long header"}
	if v := r.bytes("version", 4); v != nil {
		h.Version = binary.BigEndian.Uint32(v)
	}
	h.DstConnID = r.bytes("destination connection ID", uint64(r.byte1("destination connection ID length")))
	h.SrcConnID = r.bytes("source connection ID", uint64(r.byte1("source connection ID length")))
	if r.err != nil {
		return nil, 0, 0, r.err
	}
	if h.Version == 0 {
		h.Type = VersionNegotiation
		rest := r.rest()
		if len(rest)%4 != 0 {
			return nil, 0, 0, fmt.Errorf("%w: Version Negotiation: %d bytes of versions", ErrMalformed, len(rest))
		}
		for i := 0; i < len(rest); i += 4 {
			h.Versions = append(h.Versions, binary.BigEndian.Uint32(rest[i:]))
		}
		return h, 0, len(b), nil
	}
	h.Type = typeOf(h.Version, b[0]>>4&3)
	switch h.Type {
	case Retry:
		h.Reserved = b[0] & 0x0f
		rest := r.rest()
		if len(rest) < 16 {
			return nil, 0, 0, fmt.Errorf("%w: Retry: %d bytes after the connection IDs, under the 16 of the tag", ErrMalformed, len(rest))
		}
		h.Token = rest[:len(rest)-16]
		h.RetryTag = [16]byte(rest[len(rest)-16:])
		return h, 0, len(b), nil
	case Initial:
		h.Token = r.bytes("token", r.varint("token length"))
	}
	h.Length = r.varint("length")
	if r.err != nil {
		return nil, 0, 0, r.err
	}
	if h.Length > uint64(len(b)-r.off) {
		return nil, 0, 0, fmt.Errorf("%w: %s packet: length %d, %d bytes left", ErrMalformed, h.Type, h.Length, len(b)-r.off)
	}
	return h, r.off, r.off + int(h.Length), nil
}

// OpenPacket removes header protection from pkt (one packet, as ParseHeader
// delimited it) and decrypts its payload with k. largest is the largest
// packet number received in the space so far, -1 for none. It fills h's
// PacketNumber, PNLen, KeyPhase and Reserved even when decryption fails (a
// failure with another KeyPhase calls for the next keys). pkt is not
// modified.
func OpenPacket(pkt []byte, h *Header, pnOffset int, k *Keys, largest int64) ([]byte, error) {
	if pnOffset+20 > len(pkt) {
		return nil, fmt.Errorf("%w: %s packet: %d bytes, too short to sample for header protection", ErrMalformed, h.Type, len(pkt))
	}
	mask := k.HeaderMask(pkt[pnOffset+4 : pnOffset+20])
	first := pkt[0]
	if h.Type == OneRTT {
		first ^= mask[0] & 0x1f
		h.KeyPhase = first&0x04 != 0
		h.Reserved = first >> 3 & 3
	} else {
		first ^= mask[0] & 0x0f
		h.Reserved = first >> 2 & 3
	}
	h.PNLen = int(first&3) + 1
	hdr := make([]byte, pnOffset+h.PNLen)
	copy(hdr, pkt)
	hdr[0] = first
	var truncated uint64
	for i := 0; i < h.PNLen; i++ {
		hdr[pnOffset+i] ^= mask[1+i]
		truncated = truncated<<8 | uint64(hdr[pnOffset+i])
	}
	h.PacketNumber = DecodePacketNumber(largest, truncated, h.PNLen)
	payload, err := k.OpenPayload(nil, h.PacketNumber, hdr, pkt[len(hdr):])
	if err != nil {
		return nil, fmt.Errorf("quicwire: %s packet %d: decryption failed: %w", h.Type, h.PacketNumber, err)
	}
	return payload, nil
}

// DecodePacketNumber recovers a full packet number from its truncated
// encoding of pnLen bytes (RFC 9000 §A.3); largest is -1 for none.
func DecodePacketNumber(largest int64, truncated uint64, pnLen int) uint64 {
	expected := uint64(largest + 1)
	win := uint64(1) << (8 * pnLen)
	hwin, mask := win/2, win-1
	candidate := expected&^mask | truncated
	switch {
	case candidate+hwin <= expected && candidate < 1<<62-win:
		return candidate + win
	case candidate > expected+hwin && candidate >= win:
		return candidate - win
	}
	return candidate
}

// SplitDatagram cuts a UDP datagram into its coalesced packets (RFC 9000
// §12.2). A short-header packet takes the rest of the datagram.
func SplitDatagram(b []byte, shortDCIDLen int) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		_, _, n, err := ParseHeader(b, shortDCIDLen)
		if err != nil {
			return out, err
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out, nil
}
