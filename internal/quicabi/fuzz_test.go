//go:build linux

package quicabi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// buildCmsg encodes r the way the kernel would send it.
func buildCmsg(r RecvCmsg) []byte {
	var b []byte
	if r.HasStreamInfo {
		b = AppendStreamInfoCmsg(b, r.Stream.StreamID, r.Stream.Flags)
	}
	if r.HasHandshakeInfo {
		b = AppendHandshakeInfoCmsg(b, r.Level)
	}
	return b
}

func FuzzParseCmsg(f *testing.F) {
	for _, s := range [][]byte{
		nil, vecHandshake, vecHandshake[:17], vecStreamNew, vecStreamRecv, vecOther, vecUnknownType,
		cat(vecOther, vecHandshake), cat(vecStreamRecv, vecUnknownType[:19]), vecStreamRecv[:24],
		HandshakeInfoCmsg(QUIC_CRYPTO_APP), StreamInfoCmsg(-1, 0x600),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, oob []byte) {
		r, err := ParseCmsg(oob)
		if err != nil {
			if r != (RecvCmsg{}) {
				t.Fatalf("error %v with a non-zero result %+v", err, r)
			}
			return
		}
		r2, err := ParseCmsg(buildCmsg(r))
		if err != nil || r2 != r {
			t.Fatalf("parse(build(%+v)) = %+v, %v", r, r2, err)
		}
	})
}

// encodeEvent is the inverse of DecodeEvent.
func encodeEvent(t *testing.T, ev Event) []byte {
	b := []byte{byte(ev.Type())}
	switch e := ev.(type) {
	case StreamUpdate:
		return append(b, e.Marshal()...)
	case StreamMaxData:
		return append(b, e.Marshal()...)
	case MaxStreams:
		return binary.NativeEndian.AppendUint64(b, e.MaxStreamID)
	case ConnectionID:
		return append(b, ConnectionIDInfo(e).Marshal()...)
	case ConnectionClose:
		return append(b, e.Marshal()...)
	case Migration:
		return append(b, map[bool]byte{false: 0, true: 1}[e.Local])
	case KeyUpdate:
		return append(b, e.Phase)
	case NewToken:
		return append(b, e.Token...)
	case NewSessionTicket:
		return append(b, e.Message...)
	}
	t.Fatalf("unknown event %T", ev)
	return nil
}

func FuzzDecodeEvent(f *testing.F) {
	for _, v := range eventVectors {
		f.Add(v.b)
	}
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{10, 1})
	f.Add([]byte{5, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := DecodeEvent(b)
		if err != nil {
			if ev != nil {
				t.Fatalf("error %v with event %#v", err, ev)
			}
			if !errors.Is(err, ErrUnknownEvent) && !errors.Is(err, ErrTruncated) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if ev.Type() != EventType(b[0]) {
			t.Fatalf("Type() = %v for type byte %d", ev.Type(), b[0])
		}
		ev2, err := DecodeEvent(encodeEvent(t, ev))
		if err != nil || !reflect.DeepEqual(ev2, ev) {
			t.Fatalf("decode(encode(%#v)) = %#v, %v", ev, ev2, err)
		}
	})
}

// fuzzStruct checks that dec fails exactly on short input, and that for every
// value it decodes, enc gives size bytes and dec(enc(x)) == x.
func fuzzStruct[T comparable](f *testing.F, size int, dec func([]byte) (T, error), enc func(T) []byte) {
	f.Add(make([]byte, size))
	f.Add(bytes.Repeat([]byte{0xff}, size))
	f.Add(seq(size, 1))
	f.Add(seq(size+3, 0x40))
	f.Add(make([]byte, size-1))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := dec(b)
		if (err != nil) != (len(b) < size) {
			t.Fatalf("%d bytes: error %v", len(b), err)
		}
		if err != nil {
			if !errors.Is(err, ErrTruncated) {
				t.Fatalf("%d bytes: error %v does not wrap ErrTruncated", len(b), err)
			}
			return
		}
		e := enc(x)
		if len(e) != size {
			t.Fatalf("encoding of %+v is %d bytes, want %d", x, len(e), size)
		}
		y, err := dec(e)
		if err != nil || y != x {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", x, y, err)
		}
		if !bytes.Equal(enc(y), e) {
			t.Fatalf("encoding of %+v is not stable", x)
		}
	})
}

func FuzzUnmarshalTransportParam(f *testing.F) {
	fuzzStruct(f, SizeofTransportParam, UnmarshalTransportParam, TransportParam.Marshal)
}

func FuzzUnmarshalConfig(f *testing.F) {
	fuzzStruct(f, SizeofConfig, UnmarshalConfig, Config.Marshal)
}

func FuzzUnmarshalCryptoSecret(f *testing.F) {
	fuzzStruct(f, SizeofCryptoSecret, UnmarshalCryptoSecret, CryptoSecret.Marshal)
}

func FuzzUnmarshalErrInfo(f *testing.F) {
	fuzzStruct(f, SizeofErrInfo, UnmarshalErrInfo, ErrInfo.Marshal)
}

func FuzzUnmarshalConnectionIDInfo(f *testing.F) {
	fuzzStruct(f, SizeofConnectionIDInfo, UnmarshalConnectionIDInfo, ConnectionIDInfo.Marshal)
}

func FuzzUnmarshalEventOption(f *testing.F) {
	fuzzStruct(f, SizeofEventOption, UnmarshalEventOption, EventOption.Marshal)
}

func FuzzUnmarshalConnectionClose(f *testing.F) {
	fuzzStruct(f, SizeofConnectionClose, UnmarshalConnectionClose, ConnectionClose.Marshal)
}

func FuzzUnmarshalStreamInfo(f *testing.F) {
	fuzzStruct(f, SizeofStreamInfo, UnmarshalStreamInfo, StreamInfo.Marshal)
}

func FuzzUnmarshalHandshakeInfo(f *testing.F) {
	fuzzStruct(f, SizeofHandshakeInfo, UnmarshalHandshakeInfo, HandshakeInfo.Marshal)
}

func FuzzUnmarshalStreamUpdate(f *testing.F) {
	fuzzStruct(f, SizeofStreamUpdate, UnmarshalStreamUpdate, StreamUpdate.Marshal)
}

func FuzzUnmarshalStreamMaxData(f *testing.F) {
	fuzzStruct(f, SizeofStreamMaxData, UnmarshalStreamMaxData, StreamMaxData.Marshal)
}
