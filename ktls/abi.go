//go:build linux

package ktls

import (
	"crypto"
	"crypto/tls"
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// The kernel TLS ABI, from include/uapi/linux/tls.h. golang.org/x/sys/unix
// has SOL_TLS and TCP_ULP but none of the TLS_* option names, so they are
// spelled out here.
const (
	solTLS = unix.SOL_TLS // 282

	// setsockopt(SOL_TLS, ...) option names.
	optTLSTX              = 1 // TLS_TX: transmit keys
	optTLSRX              = 2 // TLS_RX: receive keys
	optTLSTXZeroCopyRO    = 3 // TLS_TX_ZEROCOPY_RO: sendfile without a copy (device offload)
	optTLSRXExpectNoPad   = 4 // TLS_RX_EXPECT_NO_PAD: TLS 1.3 records carry no padding
	cmsgTLSSetRecordType  = 1 // TLS_SET_RECORD_TYPE: cmsg on sendmsg
	cmsgTLSGetRecordType  = 2 // TLS_GET_RECORD_TYPE: cmsg on recvmsg
	kernelTLS12Version    = 0x0303
	kernelTLS13Version    = 0x0304
	kernelCipherAESGCM128 = 51
	kernelCipherAESGCM256 = 52
	kernelCipherChaCha20  = 54
	cryptoInfoHeaderSize  = 4 // struct tls_crypto_info {__u16 version; __u16 cipher_type;}
	recSeqSize            = 8
)

// TLS record content types.
const (
	recordChangeCipherSpec = 20
	recordAlert            = 21
	recordHandshake        = 22
	recordApplicationData  = 23
)

// kernelCipher describes one struct tls12_crypto_info_* layout: the fields
// follow the 4-byte header in the order iv, key, salt, rec_seq, all byte
// arrays, so the struct has no padding.
type kernelCipher struct {
	id      uint16
	name    string
	ivLen   int // the iv field: explicit nonce (GCM) or the whole static IV (ChaCha20)
	keyLen  int
	saltLen int // the implicit nonce part (GCM); 0 for ChaCha20
}

func (k *kernelCipher) size() int {
	return cryptoInfoHeaderSize + k.ivLen + k.keyLen + k.saltLen + recSeqSize
}

var (
	kcAESGCM128 = &kernelCipher{kernelCipherAESGCM128, "TLS_CIPHER_AES_GCM_128", 8, 16, 4}
	kcAESGCM256 = &kernelCipher{kernelCipherAESGCM256, "TLS_CIPHER_AES_GCM_256", 8, 32, 4}
	kcChaCha20  = &kernelCipher{kernelCipherChaCha20, "TLS_CIPHER_CHACHA20_POLY1305", 12, 32, 0}
)

// suite maps a crypto/tls cipher suite to the kernel cipher and the hash its
// key schedule uses.
type suite struct {
	id     uint16
	tls13  bool
	kernel *kernelCipher
	hash   crypto.Hash
	// fixedIVLen is the IV length taken from the key schedule: 12 for TLS 1.3
	// and for ChaCha20 in TLS 1.2, 4 (the GCM salt) for TLS 1.2 AES-GCM.
	fixedIVLen int
}

var suites = map[uint16]*suite{
	tls.TLS_AES_128_GCM_SHA256:       {tls.TLS_AES_128_GCM_SHA256, true, kcAESGCM128, crypto.SHA256, 12},
	tls.TLS_AES_256_GCM_SHA384:       {tls.TLS_AES_256_GCM_SHA384, true, kcAESGCM256, crypto.SHA384, 12},
	tls.TLS_CHACHA20_POLY1305_SHA256: {tls.TLS_CHACHA20_POLY1305_SHA256, true, kcChaCha20, crypto.SHA256, 12},

	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:       {tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, false, kcAESGCM128, crypto.SHA256, 4},
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:         {tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, false, kcAESGCM128, crypto.SHA256, 4},
	tls.TLS_RSA_WITH_AES_128_GCM_SHA256:               {tls.TLS_RSA_WITH_AES_128_GCM_SHA256, false, kcAESGCM128, crypto.SHA256, 4},
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:       {tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, false, kcAESGCM256, crypto.SHA384, 4},
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:         {tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, false, kcAESGCM256, crypto.SHA384, 4},
	tls.TLS_RSA_WITH_AES_256_GCM_SHA384:               {tls.TLS_RSA_WITH_AES_256_GCM_SHA384, false, kcAESGCM256, crypto.SHA384, 4},
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: {tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, false, kcChaCha20, crypto.SHA256, 12},
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:   {tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, false, kcChaCha20, crypto.SHA256, 12},
}

// lookupSuite returns the kernel mapping of a negotiated suite, or an error
// wrapping ErrUnsupportedCipher.
func lookupSuite(version, id uint16) (*suite, error) {
	if version != tls.VersionTLS12 && version != tls.VersionTLS13 {
		return nil, fmt.Errorf("%w: %s negotiated; kernel TLS takes only TLS 1.2 and TLS 1.3 (set tls.Config.MinVersion to tls.VersionTLS12)",
			ErrUnsupportedCipher, tls.VersionName(version))
	}
	s, ok := suites[id]
	if !ok || s.tls13 != (version == tls.VersionTLS13) {
		return nil, fmt.Errorf("%w: %s with %s; kernel TLS takes AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305 "+
			"(restrict tls.Config.CipherSuites to those, or set Config.Fallback)",
			ErrUnsupportedCipher, tls.VersionName(version), tls.CipherSuiteName(id))
	}
	return s, nil
}

// cryptoInfo is one direction's struct tls12_crypto_info_*.
type cryptoInfo struct {
	version uint16 // kernelTLS12Version or kernelTLS13Version
	cipher  *kernelCipher
	iv      []byte
	key     []byte
	salt    []byte
	recSeq  uint64
}

// marshal encodes the struct as the kernel reads it (native byte order for
// the two __u16 header fields; the rest are byte arrays).
func (ci *cryptoInfo) marshal() ([]byte, error) {
	k := ci.cipher
	if len(ci.iv) != k.ivLen || len(ci.key) != k.keyLen || len(ci.salt) != k.saltLen {
		return nil, fmt.Errorf("ktls: internal error: %s wants iv %d, key %d, salt %d bytes; have %d, %d, %d",
			k.name, k.ivLen, k.keyLen, k.saltLen, len(ci.iv), len(ci.key), len(ci.salt))
	}
	b := make([]byte, cryptoInfoHeaderSize, k.size())
	binary.NativeEndian.PutUint16(b[0:], ci.version)
	binary.NativeEndian.PutUint16(b[2:], k.id)
	b = append(b, ci.iv...)
	b = append(b, ci.key...)
	b = append(b, ci.salt...)
	b = binary.BigEndian.AppendUint64(b, ci.recSeq)
	return b, nil
}

// unmarshalCryptoInfo is the inverse of marshal (used by tests and
// diagnostics).
func unmarshalCryptoInfo(b []byte) (*cryptoInfo, error) {
	if len(b) < cryptoInfoHeaderSize {
		return nil, fmt.Errorf("ktls: crypto info of %d bytes is too short", len(b))
	}
	ci := &cryptoInfo{version: binary.NativeEndian.Uint16(b[0:])}
	switch binary.NativeEndian.Uint16(b[2:]) {
	case kernelCipherAESGCM128:
		ci.cipher = kcAESGCM128
	case kernelCipherAESGCM256:
		ci.cipher = kcAESGCM256
	case kernelCipherChaCha20:
		ci.cipher = kcChaCha20
	default:
		return nil, fmt.Errorf("ktls: unknown kernel cipher %d", binary.NativeEndian.Uint16(b[2:]))
	}
	k := ci.cipher
	if len(b) != k.size() {
		return nil, fmt.Errorf("ktls: %s crypto info is %d bytes, want %d", k.name, len(b), k.size())
	}
	p := b[cryptoInfoHeaderSize:]
	ci.iv, p = p[:k.ivLen:k.ivLen], p[k.ivLen:]
	ci.key, p = p[:k.keyLen:k.keyLen], p[k.keyLen:]
	ci.salt, p = p[:k.saltLen:k.saltLen], p[k.saltLen:]
	ci.recSeq = binary.BigEndian.Uint64(p)
	return ci, nil
}

func (ci *cryptoInfo) wipe() {
	clear(ci.key)
	clear(ci.iv)
	clear(ci.salt)
}
