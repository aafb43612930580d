package quicwire

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"hash"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// QUIC versions this package encodes.
const (
	Version1 uint32 = 0x00000001 // RFC 9000
	Version2 uint32 = 0x6b3343cf // RFC 9369
)

var (
	saltV1 = []byte{0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a}
	saltV2 = []byte{0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9}
)

// labels are the HKDF labels of a version's packet protection (RFC 9001
// §5.1, RFC 9369 §3.3.2).
type labels struct{ key, iv, hp, ku string }

func labelsFor(version uint32) labels {
	if version == Version2 {
		return labels{"quicv2 key", "quicv2 iv", "quicv2 hp", "quicv2 ku"}
	}
	return labels{"quic key", "quic iv", "quic hp", "quic ku"}
}

// hkdfExpandLabel is TLS 1.3's HKDF-Expand-Label with an empty context.
func hkdfExpandLabel(h func() hash.Hash, secret []byte, label string, n int) []byte {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, 0)
	out, err := hkdf.Expand(h, secret, string(info), n)
	if err != nil {
		panic("quicwire: HKDF-Expand-Label: " + err.Error()) // only for n over 255 hashes
	}
	return out
}

// InitialSecrets derives the client's and the server's Initial secrets from
// the client's first destination connection ID (RFC 9001 §5.2; RFC 9369 §3.3.1
// for version 2).
func InitialSecrets(version uint32, dcid []byte) (client, server []byte) {
	salt := saltV1
	if version == Version2 {
		salt = saltV2
	}
	initial, err := hkdf.Extract(sha256.New, dcid, salt)
	if err != nil {
		panic("quicwire: HKDF-Extract: " + err.Error())
	}
	return hkdfExpandLabel(sha256.New, initial, "client in", 32), hkdfExpandLabel(sha256.New, initial, "server in", 32)
}

// InitialKeys returns the packet protection of both directions of the
// Initial packet number space for a connection whose client first sent to
// dcid.
func InitialKeys(version uint32, dcid []byte) (client, server *Keys) {
	c, s := InitialSecrets(version, dcid)
	client, err := NewKeys(version, tls.TLS_AES_128_GCM_SHA256, c)
	if err != nil {
		panic(err)
	}
	server, err = NewKeys(version, tls.TLS_AES_128_GCM_SHA256, s)
	if err != nil {
		panic(err)
	}
	return client, server
}

// Keys protect the packets of one direction of one packet number space: the
// AEAD with its IV, and the header protection key. Keys are not safe for
// concurrent use.
type Keys struct {
	Version uint32
	Suite   uint16
	Secret  []byte
	Key, IV []byte
	HPKey   []byte

	aead cipher.AEAD
	hp   func(sample []byte) [5]byte
	hash func() hash.Hash
}

// NewKeys derives the packet protection keys of a TLS 1.3 cipher suite
// (TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384 or
// TLS_CHACHA20_POLY1305_SHA256) from a traffic secret.
func NewKeys(version uint32, suite uint16, secret []byte) (*Keys, error) {
	k := &Keys{Version: version, Suite: suite, Secret: secret}
	keyLen := 16
	switch suite {
	case tls.TLS_AES_128_GCM_SHA256:
		k.hash = sha256.New
	case tls.TLS_AES_256_GCM_SHA384:
		k.hash, keyLen = sha512.New384, 32
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		k.hash, keyLen = sha256.New, 32
	default:
		return nil, fmt.Errorf("quicwire: cipher suite 0x%04x is not a TLS 1.3 suite QUIC uses", suite)
	}
	l := labelsFor(version)
	k.Key = hkdfExpandLabel(k.hash, secret, l.key, keyLen)
	k.IV = hkdfExpandLabel(k.hash, secret, l.iv, 12)
	k.HPKey = hkdfExpandLabel(k.hash, secret, l.hp, keyLen)
	if err := k.init(); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Keys) init() error {
	if k.Suite == tls.TLS_CHACHA20_POLY1305_SHA256 {
		aead, err := chacha20poly1305.New(k.Key)
		if err != nil {
			return fmt.Errorf("quicwire: ChaCha20-Poly1305: %w", err)
		}
		k.aead = aead
		hpKey := k.HPKey
		k.hp = func(sample []byte) [5]byte {
			var mask [5]byte
			c, err := chacha20.NewUnauthenticatedCipher(hpKey, sample[4:16])
			if err != nil {
				panic(err) // key and nonce sizes are fixed
			}
			c.SetCounter(binary.LittleEndian.Uint32(sample[:4]))
			c.XORKeyStream(mask[:], mask[:])
			return mask
		}
		return nil
	}
	block, err := aes.NewCipher(k.Key)
	if err != nil {
		return fmt.Errorf("quicwire: AES: %w", err)
	}
	k.aead, err = cipher.NewGCM(block)
	if err != nil {
		return fmt.Errorf("quicwire: AES-GCM: %w", err)
	}
	hpBlock, err := aes.NewCipher(k.HPKey)
	if err != nil {
		return fmt.Errorf("quicwire: AES header protection: %w", err)
	}
	k.hp = func(sample []byte) [5]byte {
		var out [16]byte
		hpBlock.Encrypt(out[:], sample[:16])
		return [5]byte(out[:5])
	}
	return nil
}

// Next returns the keys after a key update (RFC 9001 §6): a new secret by
// the "quic ku" label, new AEAD keys and the same header protection key.
func (k *Keys) Next() *Keys {
	n := &Keys{Version: k.Version, Suite: k.Suite, HPKey: k.HPKey, hash: k.hash}
	l := labelsFor(k.Version)
	n.Secret = hkdfExpandLabel(k.hash, k.Secret, l.ku, len(k.Secret))
	n.Key = hkdfExpandLabel(k.hash, n.Secret, l.key, len(k.Key))
	n.IV = hkdfExpandLabel(k.hash, n.Secret, l.iv, 12)
	if err := n.init(); err != nil {
		panic(err) // the sizes are those that worked for k
	}
	return n
}

// Overhead is the AEAD's tag length, 16 for every QUIC suite.
func (k *Keys) Overhead() int { return k.aead.Overhead() }

func (k *Keys) nonce(pn uint64) []byte {
	n := make([]byte, 12)
	copy(n, k.IV)
	for i := 0; i < 8; i++ {
		n[11-i] ^= byte(pn >> (8 * i))
	}
	return n
}

// SealPayload encrypts a payload with packet number pn and the unprotected
// header as associated data, appending to dst.
func (k *Keys) SealPayload(dst []byte, pn uint64, header, payload []byte) []byte {
	return k.aead.Seal(dst, k.nonce(pn), payload, header)
}

// OpenPayload decrypts a payload.
func (k *Keys) OpenPayload(dst []byte, pn uint64, header, ciphertext []byte) ([]byte, error) {
	return k.aead.Open(dst, k.nonce(pn), ciphertext, header)
}

// HeaderMask is the 5-byte header protection mask of a 16-byte sample.
func (k *Keys) HeaderMask(sample []byte) [5]byte { return k.hp(sample) }

// RetryIntegrityTag computes the tag of a Retry packet (RFC 9001 §5.8,
// RFC 9369 §3.3.3): retry is the packet without its tag, odcid the
// destination connection ID of the client's first Initial.
func RetryIntegrityTag(version uint32, odcid, retry []byte) [16]byte {
	key := []byte{0xbe, 0x0c, 0x69, 0x0b, 0x9f, 0x66, 0x57, 0x5a, 0x1d, 0x76, 0x6b, 0x54, 0xe3, 0x68, 0xc8, 0x4e}
	nonce := []byte{0x46, 0x15, 0x99, 0xd3, 0x5d, 0x63, 0x2b, 0xf2, 0x23, 0x98, 0x25, 0xbb}
	if version == Version2 {
		key = []byte{0x8f, 0xb4, 0xb0, 0x1b, 0x56, 0xac, 0x48, 0xe2, 0x60, 0xfb, 0xcb, 0xce, 0xad, 0x7c, 0xcc, 0x92}
		nonce = []byte{0xd8, 0x69, 0x69, 0xbc, 0x2d, 0x7c, 0x6d, 0x99, 0x90, 0xef, 0xb0, 0x4a}
	}
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	pseudo := append([]byte{byte(len(odcid))}, odcid...)
	pseudo = append(pseudo, retry...)
	return [16]byte(gcm.Seal(nil, nonce, nil, pseudo))
}
