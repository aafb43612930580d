//go:build linux

package ktls

import (
	"bytes"
	"crypto"
	"crypto/hkdf"
	"crypto/hmac"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"sync"

	_ "crypto/sha256" // the key schedules' hashes
	_ "crypto/sha512"
)

// hkdfExpandLabel is HKDF-Expand-Label from RFC 8446 section 7.1.
func hkdfExpandLabel(h crypto.Hash, secret []byte, label string, context []byte, length int) []byte {
	info := make([]byte, 0, 4+6+len(label)+len(context))
	info = binary.BigEndian.AppendUint16(info, uint16(length))
	info = append(info, byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, byte(len(context)))
	info = append(info, context...)
	out, err := hkdf.Expand(h.New, secret, string(info), length)
	if err != nil {
		panic("ktls: HKDF-Expand-Label: " + err.Error()) // only for absurd lengths
	}
	return out
}

// tls13TrafficKeys derives the record key and IV from a TLS 1.3 traffic
// secret (RFC 8446 section 7.3).
func tls13TrafficKeys(s *suite, secret []byte) (key, iv []byte) {
	key = hkdfExpandLabel(s.hash, secret, "key", nil, s.kernel.keyLen)
	iv = hkdfExpandLabel(s.hash, secret, "iv", nil, 12)
	return key, iv
}

// nextTrafficSecret is application_traffic_secret_N+1 (RFC 8446 section 7.2).
func nextTrafficSecret(s *suite, secret []byte) []byte {
	return hkdfExpandLabel(s.hash, secret, "traffic upd", nil, s.hash.Size())
}

// prf12 is the TLS 1.2 PRF, P_hash(secret, label + seed) (RFC 5246 section 5).
func prf12(h crypto.Hash, secret []byte, label string, seed []byte, n int) []byte {
	ls := append([]byte(label), seed...)
	out := make([]byte, 0, n+h.Size())
	mac := hmac.New(h.New, secret)
	mac.Write(ls)
	a := mac.Sum(nil) // A(1)
	for len(out) < n {
		mac.Reset()
		mac.Write(a)
		mac.Write(ls)
		out = mac.Sum(out)
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(a[:0])
	}
	return out[:n]
}

// tls12KeyBlock expands the master secret into the client and server write
// keys and IVs of an AEAD suite (RFC 5246 section 6.3; AEAD suites have no
// MAC keys).
func tls12KeyBlock(s *suite, master, clientRandom, serverRandom []byte) (ckey, skey, civ, siv []byte) {
	kl, il := s.kernel.keyLen, s.fixedIVLen
	seed := append(append([]byte{}, serverRandom...), clientRandom...)
	kb := prf12(s.hash, master, "key expansion", seed, 2*kl+2*il)
	return kb[:kl], kb[kl : 2*kl], kb[2*kl : 2*kl+il], kb[2*kl+il:]
}

// directionInfo builds one direction's crypto info from that direction's
// key, full IV and record sequence number.
func directionInfo(s *suite, key, iv []byte, seq uint64) *cryptoInfo {
	ci := &cryptoInfo{cipher: s.kernel, key: key, recSeq: seq, version: kernelTLS12Version}
	if s.tls13 {
		ci.version = kernelTLS13Version
	}
	switch {
	case s.kernel == kcChaCha20:
		ci.iv, ci.salt = iv[:12], []byte{}
	case s.tls13:
		// AES-GCM in TLS 1.3: nonce = (salt || iv) XOR seq.
		ci.salt, ci.iv = iv[:4], iv[4:12]
	default:
		// AES-GCM in TLS 1.2: the salt is the 4-byte implicit IV; iv is the
		// first explicit nonce, which the kernel increments per record.
		// Starting it at the sequence number continues crypto/tls's own
		// choice (explicit nonce = sequence number), so no nonce repeats.
		ci.salt = iv[:4]
		ci.iv = binary.BigEndian.AppendUint64(nil, seq)
	}
	return ci
}

// keyLog captures the secrets crypto/tls writes to Config.KeyLogWriter (in
// the NSS key log format) and passes every line on to the user's writer.
type keyLog struct {
	user io.Writer

	mu           sync.Mutex
	partial      []byte
	secrets      map[string][]byte // label → secret
	clientRandom []byte
}

func (k *keyLog) Write(p []byte) (int, error) {
	k.mu.Lock()
	k.partial = append(k.partial, p...)
	for {
		i := bytes.IndexByte(k.partial, '\n')
		if i < 0 {
			break
		}
		k.parse(k.partial[:i])
		k.partial = k.partial[i+1:]
	}
	k.mu.Unlock()
	if k.user != nil {
		return k.user.Write(p)
	}
	return len(p), nil
}

func (k *keyLog) parse(line []byte) {
	f := bytes.Fields(line)
	if len(f) != 3 {
		return
	}
	secret := make([]byte, hex.DecodedLen(len(f[2])))
	if _, err := hex.Decode(secret, f[2]); err != nil {
		return
	}
	cr := make([]byte, hex.DecodedLen(len(f[1])))
	if _, err := hex.Decode(cr, f[1]); err != nil {
		return
	}
	if k.secrets == nil {
		k.secrets = map[string][]byte{}
	}
	k.secrets[string(f[0])] = secret
	k.clientRandom = cr
}

func (k *keyLog) get(label string) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.secrets[label]
	if !ok {
		return nil, fmt.Errorf("ktls: crypto/tls did not log the %s secret (is something replacing tls.Config.KeyLogWriter, e.g. in GetConfigForClient?)", label)
	}
	return s, nil
}

func (k *keyLog) wipe() {
	k.mu.Lock()
	for _, s := range k.secrets {
		clear(s)
	}
	k.mu.Unlock()
}
