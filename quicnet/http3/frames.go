package http3

import (
	"bufio"
	"fmt"
	"io"

	"github.com/quic-go/quic-go/quicvarint"
)

// The frame types of RFC 9114 §7.2.
const (
	frameData        = 0x00
	frameHeaders     = 0x01
	frameCancelPush  = 0x03
	frameSettings    = 0x04
	framePushPromise = 0x05
	frameGoAway      = 0x07
	frameMaxPushID   = 0x0d
)

// isHTTP2Frame reports frame types HTTP/2 has and HTTP/3 reserves: a peer
// that sends one is in error (RFC 9114 §7.2.8).
func isHTTP2Frame(t uint64) bool { return t == 0x02 || t == 0x06 || t == 0x08 || t == 0x09 }

// The stream types of RFC 9114 §6.2 and RFC 9204 §4.2.
const (
	streamControl      = 0x00
	streamPush         = 0x01
	streamQPACKEncoder = 0x02
	streamQPACKDecoder = 0x03
)

// frameHeader is a frame's type and payload length.
type frameHeader struct {
	Type   uint64
	Length uint64
}

// errTruncated is a stream that ended inside a frame.
var errTruncated = &connError{Code: ErrCodeFrameError, Msg: "stream ended inside a frame"}

// readFrameHeader reads a frame's type and length. At a clean end of the
// stream before the frame it returns io.EOF; an end inside the header is
// an H3_FRAME_ERROR.
func readFrameHeader(r io.ByteReader) (frameHeader, error) {
	t, err := quicvarint.Read(r)
	if err != nil {
		return frameHeader{}, err // io.EOF: no frame
	}
	l, err := quicvarint.Read(r)
	if err != nil {
		return frameHeader{}, truncated(err)
	}
	return frameHeader{Type: t, Length: l}, nil
}

// truncated turns an end of the stream where more was due into
// H3_FRAME_ERROR, keeping other errors (a reset, a deadline).
func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errTruncated
	}
	return err
}

// appendFrameHeader appends a frame header.
func appendFrameHeader(b []byte, t, length uint64) []byte {
	return quicvarint.Append(quicvarint.Append(b, t), length)
}

// maxFrameHeaderLen is the longest a frame header can be.
const maxFrameHeaderLen = 16

// readPayload reads a frame's payload of n bytes (n is bounded by the
// caller) into buf's space, growing it as needed.
func readPayload(r io.Reader, n uint64, buf []byte) ([]byte, error) {
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, truncated(err)
	}
	return buf, nil
}

// skipPayload discards n bytes of an unknown frame: nothing is kept, so a
// peer cannot make this side buffer it.
func skipPayload(r *bufio.Reader, n uint64) error {
	for n > 0 {
		chunk := min(n, 1<<30)
		d, err := r.Discard(int(chunk))
		n -= uint64(d)
		if err != nil {
			return truncated(err)
		}
	}
	return nil
}

// goAwayFrame is a GOAWAY's payload: a stream ID (from a server) or a push
// ID (from a client).
func parseGoAway(p []byte) (uint64, error) {
	id, n, err := quicvarint.Parse(p)
	if err != nil || n != len(p) {
		return 0, &connError{Code: ErrCodeFrameError, Msg: fmt.Sprintf("GOAWAY frame of %d bytes is not one varint", len(p))}
	}
	return id, nil
}

// appendGoAway appends a GOAWAY frame.
func appendGoAway(b []byte, id uint64) []byte {
	b = appendFrameHeader(b, frameGoAway, uint64(quicvarint.Len(id)))
	return quicvarint.Append(b, id)
}

// maxControlFrame bounds the payload of a SETTINGS, GOAWAY, MAX_PUSH_ID or
// CANCEL_PUSH frame this side reads: larger is H3_EXCESSIVE_LOAD.
const maxControlFrame = 16 << 10
