package quicwire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// RFC 9000 §A.1's examples.
func TestVarintRFC(t *testing.T) {
	for _, tc := range []struct {
		hex string
		v   uint64
	}{
		{"c2197c5eff14e88c", 151288809941952652},
		{"9d7f3e7d", 494878333},
		{"7bbd", 15293},
		{"25", 37},
		{"4025", 37},
	} {
		b := unhex(t, tc.hex)
		v, n, err := ReadVarint(b)
		if err != nil || v != tc.v || n != len(b) {
			t.Errorf("ReadVarint(%s) = %d, %d, %v; want %d, %d", tc.hex, v, n, err, tc.v, len(b))
		}
		if got := AppendVarintLen(nil, tc.v, len(b)); !bytes.Equal(got, b) {
			t.Errorf("AppendVarintLen(%d, %d) = %x, want %s", tc.v, len(b), got, tc.hex)
		}
	}
	for _, v := range []uint64{0, 63, 64, 16383, 16384, 1<<30 - 1, 1 << 30, MaxVarint} {
		b := AppendVarint(nil, v)
		if got, n, err := ReadVarint(b); got != v || n != VarintLen(v) || err != nil {
			t.Errorf("%d: round trip gave %d, %d, %v", v, got, n, err)
		}
		if _, _, err := ReadVarint(b[:len(b)-1]); len(b) > 1 && !errors.Is(err, ErrMalformed) {
			t.Errorf("%d: truncated varint: %v", v, err)
		}
	}
}

func everyFrame() []Frame {
	return []Frame{
		Padding{Len: 3},
		Ping{},
		NewAck(17, PNRange{10, 12}, PNRange{5, 7}, PNRange{0, 1}),
		&Ack{Largest: 1 << 40, Delay: 3, FirstRange: 0, ECN: &ECNCounts{1, 2, 3}},
		ResetStream{StreamID: 4, ErrorCode: 0x77, FinalSize: MaxVarint},
		StopSending{StreamID: 8, ErrorCode: 1},
		Crypto{Offset: 1 << 20, Data: []byte("hello")},
		NewToken{Token: []byte{1, 2, 3}},
		Stream{StreamID: 0, Data: []byte("abc")},
		Stream{StreamID: 4, Offset: 1<<62 - 3, Data: []byte("xyz"), Fin: true},
		Stream{StreamID: 4, ExplicitOffset: true, Fin: true, Data: []byte{}},
		MaxData{Max: 1 << 30},
		MaxStreamData{StreamID: 2, Max: 9},
		MaxStreams{Max: 100},
		MaxStreams{Uni: true, Max: 1 << 60},
		DataBlocked{Limit: 5},
		StreamDataBlocked{StreamID: 3, Limit: 7},
		StreamsBlocked{Limit: 1},
		StreamsBlocked{Uni: true, Limit: 2},
		NewConnectionID{Seq: 2, RetirePriorTo: 1, ConnID: []byte{9, 8, 7, 6}, ResetToken: [16]byte{1, 15: 2}},
		RetireConnectionID{Seq: 3},
		PathChallenge{Data: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}},
		PathResponse{Data: [8]byte{8, 7, 6, 5, 4, 3, 2, 1}},
		ConnectionClose{ErrorCode: 0x7, Offending: TypeStream | 2, Reason: []byte("frame encoding")},
		ConnectionClose{App: true, ErrorCode: 0x100, Reason: []byte{}},
		HandshakeDone{},
		Datagram{Data: []byte("dgram")},
	}
}

func normalize(f Frame) Frame {
	switch x := f.(type) {
	case Stream:
		if x.Offset != 0 {
			x.ExplicitOffset = true
		}
		if x.Data == nil {
			x.Data = []byte{}
		}
		return x
	case ConnectionClose:
		if x.Reason == nil {
			x.Reason = []byte{}
		}
		return x
	}
	return f
}

func TestFrameRoundTrip(t *testing.T) {
	for _, f := range everyFrame() {
		b := f.Append(nil)
		got, n, err := ParseFrame(b)
		if err != nil || n != len(b) {
			t.Errorf("%T %+v: ParseFrame = %d of %d bytes, %v", f, f, n, len(b), err)
			continue
		}
		if !reflect.DeepEqual(got, normalize(f)) {
			t.Errorf("round trip of %T:\n got %+v\nwant %+v", f, got, f)
		}
		if got.FrameType() != f.FrameType() {
			t.Errorf("%T: type 0x%x after the round trip, 0x%x before", f, got.FrameType(), f.FrameType())
		}
		// Every proper prefix is an error, save for frames that end in
		// data without a length (and PADDING, a run of any length).
		if _, isPad := f.(Padding); isPad {
			continue
		}
		for i := 1; i < len(b); i++ {
			if _, n, err := ParseFrame(b[:i]); err == nil {
				if s, ok := f.(Stream); ok && s.NoLength {
					continue
				}
				t.Errorf("%T truncated to %d of %d bytes parsed (%d bytes)", f, i, len(b), n)
			} else if !errors.Is(err, ErrMalformed) {
				t.Errorf("%T truncated: %v does not wrap ErrMalformed", f, err)
			}
		}
	}
}

func TestParseFramesAll(t *testing.T) {
	b := AppendFrames(nil, everyFrame()...)
	frames, err := ParseFrames(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != len(everyFrame()) {
		t.Fatalf("%d frames back, %d written", len(frames), len(everyFrame()))
	}
	if _, _, err := ParseFrame([]byte{0x21}); !errors.Is(err, ErrUnknownFrame) {
		t.Fatalf("type 0x21: %v, want ErrUnknownFrame", err)
	}
	s := Stream{StreamID: 1, Data: []byte("to the end"), NoLength: true}
	got, n, err := ParseFrame(s.Append(nil))
	if err != nil || n != len(s.Append(nil)) || !bytes.Equal(got.(Stream).Data, s.Data) || got.FrameType() != TypeStream {
		t.Fatalf("STREAM without length: %+v %v", got, err)
	}
}

func TestAckRanges(t *testing.T) {
	want := []PNRange{{100, 120}, {50, 60}, {0, 0}}
	a := NewAck(0, want...)
	got, err := a.Acked()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Acked = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []*Ack{
		{Largest: 5, FirstRange: 6},
		{Largest: 5, FirstRange: 2, Ranges: []AckRange{{Gap: 2, Len: 0}}},
		{Largest: 10, FirstRange: 2, Ranges: []AckRange{{Gap: 0, Len: 7}}},
	} {
		if r, err := bad.Acked(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%+v: Acked = %v, %v; want a range below 0", bad, r, err)
		}
	}
	// A range count no buffer could hold is an error, not an allocation.
	b := appendVarints(nil, TypeAck, 10, 0, MaxVarint, 0)
	if _, _, err := ParseFrame(b); !errors.Is(err, ErrMalformed) {
		t.Fatalf("huge range count: %v", err)
	}
}

func FuzzParseFrame(f *testing.F) {
	for _, fr := range everyFrame() {
		f.Add(fr.Append(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := ParseFrame(b)
		if err != nil {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("took %d of %d bytes", n, len(b))
		}
		// What parsed re-encodes to bytes that parse to the same frame.
		again, _, err := ParseFrame(fr.Append(nil))
		if err != nil || !reflect.DeepEqual(normalize(again), normalize(fr)) {
			t.Fatalf("re-encoding %+v gave %+v, %v", fr, again, err)
		}
	})
}

func TestTransportParameters(t *testing.T) {
	ps := TransportParameters{VarintParam(ParamInitialMaxData, 1<<20), {ID: ParamInitialSourceConnectionID, Value: []byte{1, 2}}}
	ps = ps.Set(VarintParam(ParamInitialMaxData, 5)).Set(TransportParameter{ID: 0x1234, Value: nil})
	got, err := ParseTransportParameters(ps.Append(nil))
	if err != nil || len(got) != 3 {
		t.Fatalf("%+v %v", got, err)
	}
	if v, err := got.Varint(ParamInitialMaxData, 0); v != 5 || err != nil {
		t.Fatalf("initial_max_data %d %v", v, err)
	}
	if v, err := got.Varint(ParamMaxAckDelay, 25); v != 25 || err != nil {
		t.Fatalf("default: %d %v", v, err)
	}
	if _, err := got.Varint(ParamInitialSourceConnectionID, 0); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a two-byte connection ID read as a varint: %v", err)
	}
	if len(got.Without(0x1234)) != 2 {
		t.Fatal("Without")
	}
	if _, err := ParseTransportParameters([]byte{0x04, 0x05, 0x01}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("truncated: %v", err)
	}
}
