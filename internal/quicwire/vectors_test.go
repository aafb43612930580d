package quicwire

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type rfcVectors struct {
	ClientInitialCrypto  string `json:"client_initial_crypto"`
	ClientInitialV1      string `json:"client_initial_v1"`
	ClientInitialV2      string `json:"client_initial_v2"`
	ServerInitialPayload string `json:"server_initial_payload"`
	ServerInitialV1      string `json:"server_initial_v1"`
	ServerInitialV2      string `json:"server_initial_v2"`
}

func loadVectors(t *testing.T) rfcVectors {
	t.Helper()
	b, err := os.ReadFile("testdata/rfc-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v rfcVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

var rfcDCID = []byte{0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08}

// RFC 9001 §A.1 and RFC 9369 §A.1.
func TestInitialKeysRFC(t *testing.T) {
	for _, tc := range []struct {
		version                      uint32
		clientSecret, key, iv, hp    string
		serverSecret, sKey, sIV, sHP string
	}{
		{Version1,
			"c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea", "1f369613dd76d5467730efcbe3b1a22d", "fa044b2f42a3fd3b46fb255c", "9f50449e04a0e810283a1e9933adedd2",
			"3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b", "cf3a5331653c364c88f0f379b6067e37", "0ac1493ca1905853b0bba03e", "c206b8d9b9f0f37644430b490eeaa314"},
		{Version2,
			"14ec9d6eb9fd7af83bf5a668bc17a7e283766aade7ecd0891f70f9ff7f4bf47b", "8b1a0bc121284290a29e0971b5cd045d", "91f73e2351d8fa91660e909f", "45b95e15235d6f45a6b19cbcb0294ba9",
			"0263db1782731bf4588e7e4d93b7463907cb8cd8200b5da55a8bd488eafc37c1", "82db637861d55e1d011f19ea71d5d2a7", "dd13c276499c0249d3310652", "edf6d05c83121201b436e16877593c3a"},
	} {
		c, s := InitialKeys(tc.version, rfcDCID)
		for _, x := range []struct {
			name     string
			got, hex []byte
		}{
			{"client secret", c.Secret, unhex(t, tc.clientSecret)}, {"client key", c.Key, unhex(t, tc.key)},
			{"client iv", c.IV, unhex(t, tc.iv)}, {"client hp", c.HPKey, unhex(t, tc.hp)},
			{"server secret", s.Secret, unhex(t, tc.serverSecret)}, {"server key", s.Key, unhex(t, tc.sKey)},
			{"server iv", s.IV, unhex(t, tc.sIV)}, {"server hp", s.HPKey, unhex(t, tc.sHP)},
		} {
			if !bytes.Equal(x.got, x.hex) {
				t.Errorf("version 0x%x: %s = %x, want %x", tc.version, x.name, x.got, x.hex)
			}
		}
	}
}

// RFC 9001 §A.2 and RFC 9369 §A.2: the client's first Initial, sealed and
// opened again.
func TestClientInitialRFC(t *testing.T) {
	v := loadVectors(t)
	crypto := unhex(t, v.ClientInitialCrypto)
	payload := append(crypto, make([]byte, 1162-len(crypto))...)
	for _, tc := range []struct {
		version uint32
		want    string
	}{{Version1, v.ClientInitialV1}, {Version2, v.ClientInitialV2}} {
		client, _ := InitialKeys(tc.version, rfcDCID)
		h := &Header{Type: Initial, Version: tc.version, DstConnID: rfcDCID, PNLen: 4}
		got := AppendPacket(nil, h, 2, payload, client)
		want := unhex(t, tc.want)
		if !bytes.Equal(got, want) {
			t.Fatalf("version 0x%x: sealed Initial differs from the RFC's\n got %x\nwant %x", tc.version, got[:64], want[:64])
		}
		ph, pnOff, n, err := ParseHeader(want, 0)
		if err != nil || n != len(want) || ph.Type != Initial || ph.Version != tc.version || !bytes.Equal(ph.DstConnID, rfcDCID) {
			t.Fatalf("version 0x%x: ParseHeader = %+v, %d, %v", tc.version, ph, n, err)
		}
		// The server opens it with the client's keys, which it derives itself.
		pt, err := OpenPacket(want, ph, pnOff, client, -1)
		if err != nil {
			t.Fatal(err)
		}
		if ph.PacketNumber != 2 || ph.PNLen != 4 || !bytes.Equal(pt, payload) {
			t.Fatalf("opened packet %d (%d bytes) with %d payload bytes", ph.PacketNumber, ph.PNLen, len(pt))
		}
		frames, err := ParseFrames(pt)
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := frames[0].(Crypto); !ok || c.Offset != 0 || len(c.Data) != 241 {
			t.Fatalf("first frame %#v, want CRYPTO of the 241-byte ClientHello", frames[0])
		}
		if p, ok := frames[1].(Padding); !ok || p.Len != 1162-len(crypto) {
			t.Fatalf("second frame %#v, want the padding", frames[1])
		}
	}
}

// RFC 9001 §A.3 and RFC 9369 §A.3: the server's Initial, with a 2-byte
// packet number.
func TestServerInitialRFC(t *testing.T) {
	v := loadVectors(t)
	payload := unhex(t, v.ServerInitialPayload)
	scid := unhex(t, "f067a5502a4262b5")
	for _, tc := range []struct {
		version uint32
		want    string
	}{{Version1, v.ServerInitialV1}, {Version2, v.ServerInitialV2}} {
		_, server := InitialKeys(tc.version, rfcDCID)
		h := &Header{Type: Initial, Version: tc.version, SrcConnID: scid, PNLen: 2}
		if got, want := AppendPacket(nil, h, 1, payload, server), unhex(t, tc.want); !bytes.Equal(got, want) {
			t.Fatalf("version 0x%x:\n got %x\nwant %x", tc.version, got, want)
		}
	}
}

// RFC 9001 §A.4 and RFC 9369 §A.4: the Retry integrity tag.
func TestRetryRFC(t *testing.T) {
	for _, tc := range []struct {
		version uint32
		packet  string
	}{
		{Version1, "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba"},
		{Version2, "cf6b3343cf0008f067a5502a4262b5746f6b656ec8646ce8bfe3395 2d955543665dcc7b6"},
	} {
		want := unhex(t, tc.packet)
		h, _, n, err := ParseHeader(want, 0)
		if err != nil || n != len(want) || h.Type != Retry || string(h.Token) != "token" {
			t.Fatalf("ParseHeader: %+v %v", h, err)
		}
		if got := AppendRetry(nil, h, rfcDCID); !bytes.Equal(got, want) {
			t.Fatalf("version 0x%x:\n got %x\nwant %x", tc.version, got, want)
		}
		if tag := RetryIntegrityTag(tc.version, []byte{1, 2, 3, 4}, want[:len(want)-16]); tag == h.RetryTag {
			t.Fatal("the tag does not depend on the original connection ID")
		}
	}
}

// RFC 9001 §A.5 and RFC 9369 §A.5: a ChaCha20-Poly1305 short header packet,
// and the key update's next secret.
func TestChaCha20ShortHeaderRFC(t *testing.T) {
	secret := unhex(t, "9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b")
	for _, tc := range []struct {
		version      uint32
		packet, next string
	}{
		{Version1, "4cfe4189655e5cd55c41f69080575d7999c25a5bfb", "1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9"},
		{Version2, "5558b1c60ae7b6b932bc27d786f4bc2bb20f2162ba", "c69374c49e3d2a9466fa689e49d476db5d0dfbc87d32ceeaa6343fd0ae4c7d88"},
	} {
		k, err := NewKeys(tc.version, tls.TLS_CHACHA20_POLY1305_SHA256, secret)
		if err != nil {
			t.Fatal(err)
		}
		h := &Header{Type: OneRTT, PNLen: 3}
		want := unhex(t, tc.packet)
		if got := AppendPacket(nil, h, 654360564, []byte{0x01}, k); !bytes.Equal(got, want) {
			t.Fatalf("version 0x%x:\n got %x\nwant %x", tc.version, got, want)
		}
		ph, pnOff, _, err := ParseHeader(want, 0)
		if err != nil {
			t.Fatal(err)
		}
		pt, err := OpenPacket(want, ph, pnOff, k, 654360563)
		if err != nil || !bytes.Equal(pt, []byte{1}) || ph.PacketNumber != 654360564 || ph.KeyPhase {
			t.Fatalf("OpenPacket: %x, %+v, %v", pt, ph, err)
		}
		if next := k.Next(); !bytes.Equal(next.Secret, unhex(t, tc.next)) || !bytes.Equal(next.HPKey, k.HPKey) {
			t.Fatalf("version 0x%x: next secret %x", tc.version, next.Secret)
		}
	}
}
