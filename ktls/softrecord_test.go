//go:build linux

package ktls

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"io"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

// softRecord does in Go what the kernel does with one direction's crypto
// info, so the keys and sequence numbers the switch computes can be checked
// on a host without kernel TLS.
type softRecord struct {
	aead  cipher.AEAD
	ci    *cryptoInfo
	seq   uint64
	nonce [12]byte // static part (TLS 1.3, ChaCha20) or salt (TLS 1.2 GCM)
}

func newSoftRecord(t testing.TB, ci *cryptoInfo) *softRecord {
	t.Helper()
	// Go through the kernel encoding, as the kernel would.
	b, err := ci.marshal()
	if err != nil {
		t.Fatal(err)
	}
	ci, err = unmarshalCryptoInfo(b)
	if err != nil {
		t.Fatal(err)
	}
	s := &softRecord{ci: ci, seq: ci.recSeq}
	switch ci.cipher {
	case kcChaCha20:
		s.aead, err = chacha20poly1305.New(ci.key)
		copy(s.nonce[:], ci.iv)
	default:
		var blk cipher.Block
		blk, err = aes.NewCipher(ci.key)
		if err == nil {
			s.aead, err = cipher.NewGCM(blk)
		}
		copy(s.nonce[:4], ci.salt)
		copy(s.nonce[4:], ci.iv)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *softRecord) tls13() bool { return s.ci.version == kernelTLS13Version }

// explicit reports whether records carry an 8-byte explicit nonce (TLS 1.2
// AES-GCM).
func (s *softRecord) explicit() bool { return !s.tls13() && s.ci.cipher != kcChaCha20 }

func (s *softRecord) xorNonce() []byte {
	n := s.nonce
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], s.seq)
	for i := range 8 {
		n[4+i] ^= seq[i]
	}
	return n[:]
}

func (s *softRecord) ad12(typ byte, n int) []byte {
	ad := binary.BigEndian.AppendUint64(nil, s.seq)
	ad = append(ad, typ, 3, 3)
	return binary.BigEndian.AppendUint16(ad, uint16(n))
}

// seal returns one record of type typ carrying data.
func (s *softRecord) seal(typ byte, data []byte) []byte {
	defer func() { s.seq++ }()
	if s.tls13() {
		inner := append(append([]byte{}, data...), typ)
		n := len(inner) + s.aead.Overhead()
		hdr := []byte{recordApplicationData, 3, 3, byte(n >> 8), byte(n)}
		return s.aead.Seal(hdr, s.xorNonce(), inner, hdr)
	}
	ad := s.ad12(typ, len(data))
	if s.explicit() {
		var nonce [12]byte
		copy(nonce[:4], s.nonce[:4])
		binary.BigEndian.PutUint64(nonce[4:], s.seq) // like crypto/tls and the kernel: the seq
		n := 8 + len(data) + s.aead.Overhead()
		rec := append([]byte{typ, 3, 3, byte(n >> 8), byte(n)}, nonce[4:]...)
		return s.aead.Seal(rec, nonce[:], data, ad)
	}
	n := len(data) + s.aead.Overhead()
	return s.aead.Seal([]byte{typ, 3, 3, byte(n >> 8), byte(n)}, s.xorNonce(), data, ad)
}

// open reads one record from r and returns its type and plaintext.
func (s *softRecord) open(r io.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	defer func() { s.seq++ }()
	if s.tls13() {
		pt, err := s.aead.Open(nil, s.xorNonce(), body, hdr[:])
		if err != nil {
			return 0, nil, fmt.Errorf("record seq %d: %w", s.seq, err)
		}
		i := len(pt) - 1
		for i >= 0 && pt[i] == 0 {
			i--
		}
		if i < 0 {
			return 0, nil, fmt.Errorf("record seq %d: no content type", s.seq)
		}
		return pt[i], pt[:i], nil
	}
	var nonce []byte
	if s.explicit() {
		nonce = append(append([]byte{}, s.nonce[:4]...), body[:8]...)
		body = body[8:]
	} else {
		nonce = s.xorNonce()
	}
	pt, err := s.aead.Open(nil, nonce, body, s.ad12(hdr[0], len(body)-s.aead.Overhead()))
	if err != nil {
		return 0, nil, fmt.Errorf("record seq %d: %w", s.seq, err)
	}
	return hdr[0], pt, nil
}
