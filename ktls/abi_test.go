//go:build linux

package ktls

import (
	"bytes"
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// The sizes and offsets of struct tls12_crypto_info_* in
// include/uapi/linux/tls.h (all byte arrays after a 4-byte header, so no
// padding): aes_gcm_128 is 4+8+16+4+8 = 40 bytes, aes_gcm_256 is
// 4+8+32+4+8 = 56, chacha20_poly1305 is 4+12+32+0+8 = 56 (not 60: its
// salt array has length 0; checked against /usr/include/linux/tls.h).
func TestCryptoInfoLayout(t *testing.T) {
	for _, tc := range []struct {
		k                        *kernelCipher
		id                       uint16
		size, iv, key, salt, seq int // sizes and offsets
	}{
		{kcAESGCM128, 51, 40, 4, 12, 28, 32},
		{kcAESGCM256, 52, 56, 4, 12, 44, 48},
		{kcChaCha20, 54, 56, 4, 16, 48, 48},
	} {
		t.Run(tc.k.name, func(t *testing.T) {
			if tc.k.id != tc.id || tc.k.size() != tc.size {
				t.Fatalf("%s: id %d size %d, want id %d size %d", tc.k.name, tc.k.id, tc.k.size(), tc.id, tc.size)
			}
			fill := func(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }
			ci := &cryptoInfo{version: kernelTLS13Version, cipher: tc.k,
				iv: fill(tc.k.ivLen, 0x11), key: fill(tc.k.keyLen, 0x22), salt: fill(tc.k.saltLen, 0x5a), recSeq: 0x0102030405060708}
			b, err := ci.marshal()
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != tc.size {
				t.Fatalf("marshalled %d bytes, want %d", len(b), tc.size)
			}
			if v := binary.NativeEndian.Uint16(b[0:]); v != 0x0304 {
				t.Errorf("version field %#x", v)
			}
			if v := binary.NativeEndian.Uint16(b[2:]); v != tc.id {
				t.Errorf("cipher_type field %d", v)
			}
			if b[tc.iv] != 0x11 || b[tc.key-1] != 0x11 || b[tc.key] != 0x22 || b[tc.salt-1] != 0x22 {
				t.Errorf("iv/key boundaries wrong: % x", b)
			}
			if tc.k.saltLen > 0 && (b[tc.salt] != 0x5a || b[tc.seq-1] != 0x5a) {
				t.Errorf("salt boundaries wrong: % x", b)
			}
			if !bytes.Equal(b[tc.seq:], []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
				t.Errorf("rec_seq is % x, want big-endian 0102030405060708", b[tc.seq:])
			}
			back, err := unmarshalCryptoInfo(b)
			if err != nil || back.recSeq != ci.recSeq || !bytes.Equal(back.key, ci.key) || !bytes.Equal(back.iv, ci.iv) {
				t.Errorf("round trip: %+v, %v", back, err)
			}
		})
	}
	if _, err := (&cryptoInfo{cipher: kcAESGCM128, iv: make([]byte, 8), key: make([]byte, 15), salt: make([]byte, 4)}).marshal(); err == nil {
		t.Error("marshal accepted a 15-byte AES-128 key")
	}
}

func TestABIConstants(t *testing.T) {
	if solTLS != 282 || optTLSTX != 1 || optTLSRX != 2 || optTLSTXZeroCopyRO != 3 || optTLSRXExpectNoPad != 4 ||
		cmsgTLSSetRecordType != 1 || cmsgTLSGetRecordType != 2 || unix.TCP_ULP != 31 {
		t.Fatal("kernel TLS ABI constants changed")
	}
}

func TestRecordTypeCmsg(t *testing.T) {
	b := recordTypeCmsg(recordAlert)
	msgs, err := unix.ParseSocketControlMessage(b)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("parse: %v, %d messages", err, len(msgs))
	}
	m := msgs[0]
	if m.Header.Level != solTLS || m.Header.Type != cmsgTLSSetRecordType || len(m.Data) < 1 || m.Data[0] != recordAlert {
		t.Fatalf("cmsg %+v data % x", m.Header, m.Data)
	}
	typ, err := recordTypeFromCmsg(tlsCmsg(cmsgTLSGetRecordType, recordAlert))
	if err != nil || typ != recordAlert {
		t.Fatalf("recordTypeFromCmsg = %d, %v", typ, err)
	}
}
