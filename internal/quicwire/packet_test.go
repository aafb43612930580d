package quicwire

import (
	"bytes"
	"crypto/tls"
	"errors"
	"testing"
)

func TestPacketRoundTripEverySuite(t *testing.T) {
	secret := bytes.Repeat([]byte{7}, 48)
	for _, suite := range []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256} {
		for _, version := range []uint32{Version1, Version2} {
			hashLen := 32
			if suite == tls.TLS_AES_256_GCM_SHA384 {
				hashLen = 48
			}
			k, err := NewKeys(version, suite, secret[:hashLen])
			if err != nil {
				t.Fatal(err)
			}
			dcid, scid := []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{9, 9}
			var dgram []byte
			payloads := map[PacketType][]byte{Initial: Ping{}.Append(nil), Handshake: Crypto{Data: []byte("fin")}.Append(nil),
				ZeroRTT: Stream{StreamID: 0, Data: []byte("early")}.Append(nil), OneRTT: HandshakeDone{}.Append(nil)}
			order := []PacketType{Initial, ZeroRTT, Handshake, OneRTT}
			for i, typ := range order {
				h := &Header{Type: typ, Version: version, DstConnID: dcid, SrcConnID: scid, PNLen: i + 1, KeyPhase: true, Token: []byte("tok")}
				dgram = AppendPacket(dgram, h, uint64(1000+i), payloads[typ], k)
			}
			pkts, err := SplitDatagram(dgram, len(dcid))
			if err != nil || len(pkts) != 4 {
				t.Fatalf("suite 0x%x version 0x%x: %d packets, %v", suite, version, len(pkts), err)
			}
			for i, p := range pkts {
				h, pnOff, _, err := ParseHeader(p, len(dcid))
				if err != nil {
					t.Fatal(err)
				}
				if h.Type != order[i] {
					t.Fatalf("packet %d is %s, want %s", i, h.Type, order[i])
				}
				pt, err := OpenPacket(p, h, pnOff, k, 999)
				if err != nil {
					t.Fatalf("%s: %v", h.Type, err)
				}
				if h.PacketNumber != uint64(1000+i) || h.PNLen != i+1 {
					t.Errorf("%s: packet number %d in %d bytes", h.Type, h.PacketNumber, h.PNLen)
				}
				want := payloads[h.Type]
				if len(want) < 4-h.PNLen {
					want = append(want, make([]byte, 4-h.PNLen-len(want))...)
				}
				if !bytes.Equal(pt, want) {
					t.Errorf("%s: payload %x, want %x", h.Type, pt, want)
				}
				if h.Type == OneRTT && !h.KeyPhase {
					t.Errorf("key phase lost")
				}
				if h.Type == Initial && string(h.Token) != "tok" {
					t.Errorf("token %q", h.Token)
				}
				// One flipped bit in the ciphertext fails the AEAD.
				bad := append([]byte(nil), p...)
				bad[len(bad)-1] ^= 1
				if _, err := OpenPacket(bad, h, pnOff, k, 999); err == nil {
					t.Errorf("%s: a corrupted packet opened", h.Type)
				}
			}
			// The next keys do not open a packet of the current ones.
			h, pnOff, _, _ := ParseHeader(pkts[3], len(dcid))
			if _, err := OpenPacket(pkts[3], h, pnOff, k.Next(), 999); err == nil || !h.KeyPhase {
				t.Errorf("opened with the next keys: %v", err)
			}
		}
	}
}

// RFC 9000 §A.3's example.
func TestDecodePacketNumber(t *testing.T) {
	if got := DecodePacketNumber(0xa82f30ea, 0x9b32, 2); got != 0xa82f9b32 {
		t.Fatalf("got 0x%x, want 0xa82f9b32", got)
	}
	if got := DecodePacketNumber(-1, 0, 1); got != 0 {
		t.Fatalf("first packet: %d", got)
	}
	if got := DecodePacketNumber(254, 1, 1); got != 257 {
		t.Fatalf("wrap: %d", got)
	}
}

func TestVersionNegotiation(t *testing.T) {
	b := AppendVersionNegotiation(nil, &Header{DstConnID: []byte{1}, SrcConnID: []byte{2, 3}, Versions: []uint32{Version1, Version2}})
	h, _, n, err := ParseHeader(b, 0)
	if err != nil || n != len(b) || h.Type != VersionNegotiation || len(h.Versions) != 2 || h.Versions[1] != Version2 {
		t.Fatalf("%+v %v", h, err)
	}
	if _, _, _, err := ParseHeader(b[:len(b)-1], 0); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a version cut short: %v", err)
	}
}

func FuzzParseHeader(f *testing.F) {
	k, _ := InitialKeys(Version1, rfcDCID)
	f.Add(AppendPacket(nil, &Header{Type: Initial, Version: Version1, DstConnID: rfcDCID}, 0, Ping{}.Append(nil), k))
	f.Add(AppendRetry(nil, &Header{Version: Version2, Token: []byte("t")}, rfcDCID))
	f.Fuzz(func(t *testing.T, b []byte) {
		pkts, err := SplitDatagram(b, 8)
		total := 0
		for _, p := range pkts {
			total += len(p)
			h, pnOff, _, err := ParseHeader(p, 8)
			if err != nil {
				t.Fatalf("a packet SplitDatagram cut does not parse: %v", err)
			}
			if h.Type != Retry && h.Type != VersionNegotiation {
				OpenPacket(p, h, pnOff, k, -1) // must not panic
			}
		}
		if err == nil && total != len(b) {
			t.Fatalf("packets cover %d of %d bytes", total, len(b))
		}
	})
}
