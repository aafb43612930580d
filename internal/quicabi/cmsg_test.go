//go:build linux

package quicabi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// needLE64 skips tests whose byte vectors are written for little-endian
// 64-bit Linux (x86-64, arm64).
func needLE64(t *testing.T) {
	t.Helper()
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 || unix.SizeofPtr != 8 {
		t.Skip("byte vectors are for little-endian 64-bit Linux")
	}
}

func TestCmsgSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"HandshakeInfoCmsgLen", HandshakeInfoCmsgLen, unix.CmsgLen(SizeofHandshakeInfo)},
		{"HandshakeInfoCmsgSpace", HandshakeInfoCmsgSpace, unix.CmsgSpace(SizeofHandshakeInfo)},
		{"StreamInfoCmsgLen", StreamInfoCmsgLen, unix.CmsgLen(SizeofStreamInfo)},
		{"StreamInfoCmsgSpace", StreamInfoCmsgSpace, unix.CmsgSpace(SizeofStreamInfo)},
		{"len(HandshakeInfoCmsg)", len(HandshakeInfoCmsg(0)), unix.CmsgSpace(SizeofHandshakeInfo)},
		{"len(StreamInfoCmsg)", len(StreamInfoCmsg(0, 0)), unix.CmsgSpace(SizeofStreamInfo)},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if unix.SizeofPtr == 8 { // notes §1.2, x86-64
		if HandshakeInfoCmsgLen != 17 || HandshakeInfoCmsgSpace != 24 || StreamInfoCmsgLen != 32 || StreamInfoCmsgSpace != 32 || RecvCmsgSpace != 32 {
			t.Errorf("64-bit cmsg sizes: %d %d %d %d %d, want 17 24 32 32 32",
				HandshakeInfoCmsgLen, HandshakeInfoCmsgSpace, StreamInfoCmsgLen, StreamInfoCmsgSpace, RecvCmsgSpace)
		}
	}
}

// Hand-written control messages (little-endian 64-bit): cmsg_len (8 bytes),
// cmsg_level (4), cmsg_type (4), payload, padding.
var (
	// HANDSHAKE_INFO {level HANDSHAKE}
	vecHandshake = []byte{
		17, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x01, 0, 0, 1, 0, 0, 0,
		2, 0, 0, 0, 0, 0, 0, 0,
	}
	// STREAM_INFO {id -1, flags NEW|FIN}
	vecStreamNew = []byte{
		32, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x01, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x06, 0, 0, 0, 0, 0, 0,
	}
	// STREAM_INFO {id 4, flags FIN}, as received
	vecStreamRecv = []byte{
		32, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x01, 0, 0, 0, 0, 0, 0,
		4, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0, 0, 0, 0, 0, 0,
	}
	// SOL_SOCKET (1) / SO_TIMESTAMP (29) with a 16-byte timeval
	vecOther = []byte{
		32, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 29, 0, 0, 0,
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	}
	// SOL_QUIC type 7 (unknown) with 3 bytes of payload
	vecUnknownType = []byte{
		19, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x01, 0, 0, 7, 0, 0, 0,
		1, 2, 3, 0, 0, 0, 0, 0,
	}
)

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

func TestCmsgBuild(t *testing.T) {
	needLE64(t)
	if got := HandshakeInfoCmsg(QUIC_CRYPTO_HANDSHAKE); !bytes.Equal(got, vecHandshake) {
		t.Errorf("HandshakeInfoCmsg:\n got % x\nwant % x", got, vecHandshake)
	}
	if got := StreamInfoCmsg(-1, MSG_QUIC_STREAM_NEW|MSG_QUIC_STREAM_FIN); !bytes.Equal(got, vecStreamNew) {
		t.Errorf("StreamInfoCmsg:\n got % x\nwant % x", got, vecStreamNew)
	}
	// Appending after an unaligned prefix pads it first.
	got := AppendStreamInfoCmsg([]byte{0xee}, -1, MSG_QUIC_STREAM_NEW|MSG_QUIC_STREAM_FIN)
	want := cat([]byte{0xee, 0, 0, 0, 0, 0, 0, 0}, vecStreamNew)
	if !bytes.Equal(got, want) {
		t.Errorf("AppendStreamInfoCmsg after 1 byte:\n got % x\nwant % x", got, want)
	}
	got = AppendHandshakeInfoCmsg(AppendStreamInfoCmsg(nil, -1, 0x600), QUIC_CRYPTO_HANDSHAKE)
	if want := cat(vecStreamNew, vecHandshake); !bytes.Equal(got, want) {
		t.Errorf("two messages:\n got % x\nwant % x", got, want)
	}
}

// TestCmsgAgreesWithXSys checks our encoding against x/sys/unix's parser,
// which uses the C struct layout directly.
func TestCmsgAgreesWithXSys(t *testing.T) {
	oob := AppendStreamInfoCmsg(HandshakeInfoCmsg(QUIC_CRYPTO_EARLY), 1<<40+3, MSG_QUIC_STREAM_UNI)
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want 2", len(msgs))
	}
	h, s := msgs[0], msgs[1]
	if h.Header.Level != SOL_QUIC || h.Header.Type != QUIC_HANDSHAKE_INFO || !bytes.Equal(h.Data, []byte{3}) {
		t.Errorf("handshake message: %+v % x", h.Header, h.Data)
	}
	if s.Header.Level != SOL_QUIC || s.Header.Type != QUIC_STREAM_INFO || len(s.Data) != SizeofStreamInfo {
		t.Errorf("stream message: %+v % x", s.Header, s.Data)
	}
	if si, err := UnmarshalStreamInfo(s.Data); err != nil || si != (StreamInfo{1<<40 + 3, MSG_QUIC_STREAM_UNI}) {
		t.Errorf("stream info %+v, %v", si, err)
	}
}

func TestParseCmsg(t *testing.T) {
	needLE64(t)
	hs := RecvCmsg{HasHandshakeInfo: true, Level: QUIC_CRYPTO_HANDSHAKE}
	st := RecvCmsg{HasStreamInfo: true, Stream: StreamInfo{StreamID: 4, Flags: MSG_QUIC_STREAM_FIN}}
	for _, c := range []struct {
		name string
		oob  []byte
		want RecvCmsg
	}{
		{"empty", nil, RecvCmsg{}},
		{"handshake", vecHandshake, hs},
		{"handshake without padding", vecHandshake[:17], hs},
		{"stream", vecStreamRecv, st},
		{"other level first", cat(vecOther, vecHandshake), hs},
		{"other level last", cat(vecStreamRecv, vecOther), st},
		{"unknown QUIC type", cat(vecUnknownType, vecStreamRecv), st},
		{"unknown QUIC type last without padding", cat(vecStreamRecv, vecUnknownType[:19]), st},
		{"both", cat(vecStreamRecv, vecHandshake), RecvCmsg{true, QUIC_CRYPTO_HANDSHAKE, true, st.Stream}},
		{"long handshake payload", cat([]byte{18, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x01, 0, 0, 1, 0, 0, 0, 2, 9, 0, 0, 0, 0, 0, 0}), hs},
	} {
		got, err := ParseCmsg(c.oob)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestParseCmsgErrors(t *testing.T) {
	needLE64(t)
	// STREAM_INFO cut by MSG_CTRUNC: the kernel writes cmsg_len = what fit.
	ctrunc := append([]byte{}, vecStreamRecv[:24]...)
	ctrunc[0] = 24
	for _, c := range []struct {
		name      string
		oob       []byte
		truncated bool
	}{
		{"partial header", vecHandshake[:10], true},
		{"partial header after a message", cat(vecHandshake, vecHandshake[:15]), true},
		{"cmsg_len beyond buffer", vecStreamRecv[:31], true},
		{"cmsg_len beyond buffer, other level", vecOther[:20], true},
		{"cmsg_len below header", cat([]byte{8, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x01, 0, 0, 1, 0, 0, 0}), false},
		{"cmsg_len zero", make([]byte, 16), false},
		{"huge cmsg_len", cat([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x20, 0x01, 0, 0, 1, 0, 0, 0, 2}), true},
		{"truncated stream info", ctrunc, true},
		{"empty handshake info", cat([]byte{16, 0, 0, 0, 0, 0, 0, 0, 0x20, 0x01, 0, 0, 1, 0, 0, 0}), true},
		{"two handshake infos", cat(vecHandshake, vecHandshake), false},
		{"two stream infos", cat(vecStreamRecv, vecStreamRecv), false},
	} {
		_, err := ParseCmsg(c.oob)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if errors.Is(err, ErrTruncated) != c.truncated {
			t.Errorf("%s: error %q, ErrTruncated wanted: %v", c.name, err, c.truncated)
		}
	}
	_, err := ParseCmsg(ctrunc)
	if want := "quicabi: QUIC_STREAM_INFO control message at offset 0: payload is 8 bytes, need 16: buffer too short"; err.Error() != want {
		t.Errorf("error text:\n got %q\nwant %q", err, want)
	}
}
