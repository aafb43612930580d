//go:build linux

package quicabi

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func closePayload(code uint32, frame byte, phrase string) []byte {
	b := []byte{byte(code), byte(code >> 8), byte(code >> 16), byte(code >> 24), frame, 0xaa, 0xbb, 0xcc}
	p := make([]byte, 64)
	copy(p, phrase)
	return append(b, p...)
}

// Hand-written notifications (little endian): byte 0 type, payload from 1.
var eventVectors = []struct {
	name string
	b    []byte
	want Event
}{
	{"stream update RECVD", []byte{1,
		4, 0, 0, 0, 0, 0, 0, 0, 8, 0xaa, 0xbb, 0xcc, 0, 0, 0, 0, 0x10, 0x27, 0, 0, 0, 0, 0, 0},
		StreamUpdate{ID: 4, State: QUIC_STREAM_RECV_STATE_RECVD, FinalSize: 10000}},
	{"stream update RESET_RECVD", []byte{1,
		107, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0},
		StreamUpdate{ID: 107, State: QUIC_STREAM_RECV_STATE_RESET_RECVD, ErrCode: 1, FinalSize: 5}},
	{"stream update, longer payload", []byte{1,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x99},
		StreamUpdate{ID: -1, State: QUIC_STREAM_SEND_STATE_RECVD, FinalSize: 1 << 63}},
	{"stream max data", []byte{2,
		2, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x10, 0, 0, 0, 0, 0},
		StreamMaxData{ID: 2, MaxData: 0x100000}},
	{"max streams bidi 488", []byte{3, 0xe8, 0x01, 0, 0, 0, 0, 0, 0}, MaxStreams{MaxStreamID: 488}},
	{"max streams uni 458", []byte{3, 0xca, 0x01, 0, 0, 0, 0, 0, 0}, MaxStreams{MaxStreamID: 458}},
	{"connection id", []byte{4, 1, 0, 0, 0, 8, 0, 0, 0, 5, 0, 0, 0},
		ConnectionID{Dest: true, Active: 8, PriorTo: 5}},
	{"connection close app", append([]byte{5}, closePayload(10, 0, "this is app err")...),
		ConnectionClose{ErrCode: 10, Phrase: "this is app err"}},
	{"connection close stateless reset", append([]byte{5}, closePayload(0x100, 0, "")...),
		ConnectionClose{ErrCode: QUIC_TRANSPORT_ERROR_CRYPTO}},
	{"connection close 64-byte phrase", append([]byte{5}, closePayload(0x0a, 0x08, string(bytes.Repeat([]byte{'z'}, 64)))...),
		ConnectionClose{ErrCode: 0x0a, Frame: 0x08, Phrase: string(bytes.Repeat([]byte{'z'}, 64))}},
	{"migration local", []byte{6, 1}, Migration{Local: true}},
	{"migration peer", []byte{6, 0}, Migration{Local: false}},
	{"key update", []byte{7, 1}, KeyUpdate{Phase: 1}},
	{"new token", []byte{8, 0xde, 0xad, 0xbe, 0xef}, NewToken{Token: []byte{0xde, 0xad, 0xbe, 0xef}}},
	{"new token empty", []byte{8}, NewToken{Token: []byte{}}},
	{"new session ticket", []byte{9, 4, 0, 0, 2, 0xab, 0xcd}, NewSessionTicket{Message: []byte{4, 0, 0, 2, 0xab, 0xcd}}},
}

func TestDecodeEvent(t *testing.T) {
	needLE64(t)
	for _, c := range eventVectors {
		got, err := DecodeEvent(c.b)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, got, c.want)
		}
		if got.Type() != EventType(c.b[0]) {
			t.Errorf("%s: Type() = %v, want %d", c.name, got.Type(), c.b[0])
		}
	}
}

func TestDecodeEventCopies(t *testing.T) {
	b := []byte{8, 1, 2, 3}
	ev, _ := DecodeEvent(b)
	b[1] = 99
	if tok := ev.(NewToken).Token; tok[0] != 1 {
		t.Errorf("token aliases the input: %v", tok)
	}
	b = []byte{9, 4, 0, 0, 0}
	ev, _ = DecodeEvent(b)
	b[1] = 99
	if m := ev.(NewSessionTicket).Message; m[0] != 4 {
		t.Errorf("ticket aliases the input: %v", m)
	}
}

func TestMaxStreams(t *testing.T) {
	for _, c := range []struct {
		id    uint64
		count uint64
		uni   bool
	}{
		{488, 123, false}, // func_test: bidi 488
		{458, 115, true},  // func_test: uni 458
		{0, 1, false},
		{3, 1, true},
		{1<<62 - 1, 1 << 60, true},
	} {
		m := MaxStreams{MaxStreamID: c.id}
		if m.Count() != c.count || m.Uni() != c.uni {
			t.Errorf("MaxStreams{%d}: Count %d Uni %v, want %d %v", c.id, m.Count(), m.Uni(), c.count, c.uni)
		}
	}
}

// short returns a notification of type t with an n-byte payload.
func short(t EventType, n int) []byte {
	b := make([]byte, 1+n)
	b[0] = byte(t)
	return b
}

func TestDecodeEventErrors(t *testing.T) {
	for _, c := range []struct {
		name    string
		b       []byte
		unknown bool
	}{
		{"empty", nil, false},
		{"type NONE", []byte{0, 1, 2}, true},
		{"type MAX", []byte{10}, true},
		{"type 255", []byte{255, 0}, true},
		{"stream update short", short(QUIC_EVENT_STREAM_UPDATE, SizeofStreamUpdate-1), false},
		{"stream max data short", short(QUIC_EVENT_STREAM_MAX_DATA, SizeofStreamMaxData-1), false},
		{"max streams short", short(QUIC_EVENT_STREAM_MAX_STREAM, 7), false},
		{"connection id short", short(QUIC_EVENT_CONNECTION_ID, SizeofConnectionIDInfo-1), false},
		{"connection close short", short(QUIC_EVENT_CONNECTION_CLOSE, SizeofConnectionClose-1), false},
		{"migration empty", []byte{6}, false},
		{"key update empty", []byte{7}, false},
	} {
		ev, err := DecodeEvent(c.b)
		if err == nil {
			t.Errorf("%s: decoded %#v", c.name, ev)
			continue
		}
		if errors.Is(err, ErrUnknownEvent) != c.unknown || errors.Is(err, ErrTruncated) == c.unknown {
			t.Errorf("%s: error %q has the wrong kind", c.name, err)
		}
	}
	_, err := DecodeEvent([]byte{1, 0, 0})
	if want := "quicabi: decoding STREAM_UPDATE event: payload is 2 bytes, need 24: buffer too short"; err == nil || err.Error() != want {
		t.Errorf("error text: got %q, want %q", err, want)
	}
}
