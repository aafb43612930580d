package quicabi

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Control-message geometry. A control message is a struct cmsghdr (length,
// level, type: host byte order) followed by the payload; the next one starts
// at the length rounded up to the alignment (sizeof(long)).
const (
	cmsgAlign  = unix.SizeofPtr
	cmsgHdrLen = unix.SizeofCmsghdr // CMSG_LEN(0); already aligned
	cmsgLenLen = cmsgHdrLen - 8     // size of cmsg_len (size_t)

	// HandshakeInfoCmsgLen is CMSG_LEN(sizeof(struct quic_handshake_info)),
	// the cmsg_len of a QUIC_HANDSHAKE_INFO message (17 on 64-bit Linux).
	HandshakeInfoCmsgLen = cmsgHdrLen + SizeofHandshakeInfo
	// HandshakeInfoCmsgSpace is CMSG_SPACE(sizeof(struct quic_handshake_info)),
	// the room a QUIC_HANDSHAKE_INFO message takes (24 on 64-bit Linux).
	HandshakeInfoCmsgSpace = cmsgHdrLen + (SizeofHandshakeInfo+cmsgAlign-1)&^(cmsgAlign-1)
	// StreamInfoCmsgLen is CMSG_LEN(sizeof(struct quic_stream_info)), the
	// cmsg_len of a QUIC_STREAM_INFO message (32 on 64-bit Linux).
	StreamInfoCmsgLen = cmsgHdrLen + SizeofStreamInfo
	// StreamInfoCmsgSpace is CMSG_SPACE(sizeof(struct quic_stream_info)), the
	// room a QUIC_STREAM_INFO message takes (32 on 64-bit Linux).
	StreamInfoCmsgSpace = cmsgHdrLen + (SizeofStreamInfo+cmsgAlign-1)&^(cmsgAlign-1)
	// RecvCmsgSpace is a receive control-buffer size that holds either QUIC
	// control message the kernel sends (32 on 64-bit Linux).
	RecvCmsgSpace = max(HandshakeInfoCmsgSpace, StreamInfoCmsgSpace)
)

// appendCmsg appends one SOL_QUIC control message of type typ carrying
// payload to dst, after zero bytes that align dst's length, and pads the
// message to its CMSG_SPACE.
func appendCmsg(dst []byte, typ int32, payload []byte) []byte {
	for len(dst)%cmsgAlign != 0 {
		dst = append(dst, 0)
	}
	start := len(dst)
	space := cmsgHdrLen + (len(payload)+cmsgAlign-1)&^(cmsgAlign-1)
	dst = append(dst, make([]byte, space)...)
	h := dst[start:]
	if cmsgLenLen == 8 {
		ne.PutUint64(h, uint64(cmsgHdrLen+len(payload)))
	} else {
		ne.PutUint32(h, uint32(cmsgHdrLen+len(payload)))
	}
	ne.PutUint32(h[cmsgLenLen:], uint32(int32(SOL_QUIC)))
	ne.PutUint32(h[cmsgLenLen+4:], uint32(typ))
	copy(h[cmsgHdrLen:], payload)
	return dst
}

// HandshakeInfoCmsg returns the control message (HandshakeInfoCmsgSpace
// bytes) that makes a sendmsg carry TLS handshake bytes at level.
func HandshakeInfoCmsg(level CryptoLevel) []byte {
	return AppendHandshakeInfoCmsg(make([]byte, 0, HandshakeInfoCmsgSpace), level)
}

// AppendHandshakeInfoCmsg appends the control message of HandshakeInfoCmsg
// to dst (after zero padding, if dst's length is not cmsg-aligned).
func AppendHandshakeInfoCmsg(dst []byte, level CryptoLevel) []byte {
	return appendCmsg(dst, QUIC_HANDSHAKE_INFO, HandshakeInfo{Level: level}.Marshal())
}

// StreamInfoCmsg returns the control message (StreamInfoCmsgSpace bytes) that
// makes a sendmsg go to stream id with the MSG_QUIC_STREAM_* flags.
func StreamInfoCmsg(id int64, flags uint32) []byte {
	return AppendStreamInfoCmsg(make([]byte, 0, StreamInfoCmsgSpace), id, flags)
}

// AppendStreamInfoCmsg appends the control message of StreamInfoCmsg to dst
// (after zero padding, if dst's length is not cmsg-aligned).
func AppendStreamInfoCmsg(dst []byte, id int64, flags uint32) []byte {
	var p [SizeofStreamInfo]byte
	ne.PutUint64(p[0:], uint64(id))
	ne.PutUint32(p[8:], flags)
	return appendCmsg(dst, QUIC_STREAM_INFO, p[:])
}

// RecvCmsg is what the QUIC control messages of a received message say.
type RecvCmsg struct {
	// HasHandshakeInfo is set if a QUIC_HANDSHAKE_INFO message was present:
	// the data are TLS handshake bytes at Level.
	HasHandshakeInfo bool
	Level            CryptoLevel
	// HasStreamInfo is set if a QUIC_STREAM_INFO message was present: the
	// data belong to Stream.StreamID, and Stream.Flags may have
	// MSG_QUIC_STREAM_FIN.
	HasStreamInfo bool
	Stream        StreamInfo
}

// ParseCmsg parses the control messages oob returned by recvmsg (pass
// oob[:oobn]). Messages at other levels, and SOL_QUIC messages of types this
// package does not know, are skipped. It returns an error, wrapping
// ErrTruncated where that applies, if a message header or a QUIC payload is
// cut short (for instance after MSG_CTRUNC), or if a QUIC message type
// appears twice. A payload longer than the struct is accepted; its first
// bytes are used, as the kernel does on send.
func ParseCmsg(oob []byte) (RecvCmsg, error) {
	var r RecvCmsg
	for off := 0; off < len(oob); {
		rest := oob[off:]
		if len(rest) < cmsgHdrLen {
			return RecvCmsg{}, fmt.Errorf("quicabi: control message at offset %d: %d bytes left, a header needs %d: %w", off, len(rest), cmsgHdrLen, ErrTruncated)
		}
		var n uint64
		if cmsgLenLen == 8 {
			n = ne.Uint64(rest)
		} else {
			n = uint64(ne.Uint32(rest))
		}
		level := int32(ne.Uint32(rest[cmsgLenLen:]))
		typ := int32(ne.Uint32(rest[cmsgLenLen+4:]))
		if n < cmsgHdrLen {
			return RecvCmsg{}, fmt.Errorf("quicabi: control message at offset %d (level %d, type %d): cmsg_len %d is less than the %d-byte header", off, level, typ, n, cmsgHdrLen)
		}
		if n > uint64(len(rest)) {
			return RecvCmsg{}, fmt.Errorf("quicabi: control message at offset %d (level %d, type %d): cmsg_len %d but only %d bytes left: %w", off, level, typ, n, len(rest), ErrTruncated)
		}
		data := rest[cmsgHdrLen:n]
		if level == SOL_QUIC {
			switch typ {
			case QUIC_HANDSHAKE_INFO:
				if r.HasHandshakeInfo {
					return RecvCmsg{}, fmt.Errorf("quicabi: control message at offset %d: second QUIC_HANDSHAKE_INFO", off)
				}
				if len(data) < SizeofHandshakeInfo {
					return RecvCmsg{}, payloadErr("QUIC_HANDSHAKE_INFO", off, len(data), SizeofHandshakeInfo)
				}
				r.HasHandshakeInfo, r.Level = true, CryptoLevel(data[0])
			case QUIC_STREAM_INFO:
				if r.HasStreamInfo {
					return RecvCmsg{}, fmt.Errorf("quicabi: control message at offset %d: second QUIC_STREAM_INFO", off)
				}
				if len(data) < SizeofStreamInfo {
					return RecvCmsg{}, payloadErr("QUIC_STREAM_INFO", off, len(data), SizeofStreamInfo)
				}
				r.HasStreamInfo = true
				r.Stream.StreamID = int64(ne.Uint64(data[0:]))
				r.Stream.Flags = ne.Uint32(data[8:])
			}
		}
		// The last message's padding may be missing.
		step := (n + cmsgAlign - 1) &^ (cmsgAlign - 1)
		off += int(min(step, uint64(len(rest))))
	}
	return r, nil
}

func payloadErr(typ string, off, got, need int) error {
	return fmt.Errorf("quicabi: %s control message at offset %d: payload is %d bytes, need %d: %w", typ, off, got, need, ErrTruncated)
}
