package interop

// Decryption: a connection's keys from the key log, picked by its TLS
// handshake as the trace reads it from the CRYPTO frames.

import (
	"crypto/tls"
	"encoding/binary"

	"kquic.dev/internal/quicwire"
)

// version is the connection's version for short headers: the server's
// last long header's.
func (c *Conn) version() uint32 {
	if c.Versions[ToClient][quicwire.Version2] > 0 {
		return quicwire.Version2
	}
	return quicwire.Version1
}

var labels = [4][2]string{
	{}, {"CLIENT_EARLY_TRAFFIC_SECRET", ""},
	{"CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET"},
	{"CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0"},
}

func (c *Conn) keysFor(sp int, d Dir, h *quicwire.Header, keys *KeyLog) *quicwire.Keys {
	if k := c.keys[sp][d]; k != nil && (sp == 3 || k.Version == h.Version) {
		return k
	}
	if sp == 0 {
		dcid := c.ODCID
		if c.Retry {
			dcid = c.retryDCID
		}
		cl, sv := quicwire.InitialKeys(h.Version, dcid)
		c.keys[0] = [2]*quicwire.Keys{cl, sv}
		return c.keys[0][d]
	}
	if c.ClientRandom == nil || keys == nil {
		return nil
	}
	secret := keys.Secret(c.ClientRandom, labels[sp][d])
	if secret == nil {
		return nil
	}
	version := c.version()
	if h.IsLong() {
		version = h.Version
	}
	if sp == 1 {
		if cands := c.earlyCandidates(h, keys); len(cands) > 0 {
			return cands[0]
		}
		return nil
	}
	suites := []uint16{c.Suite}
	if c.Suite == 0 {
		suites = []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256}
	}
	for _, s := range suites {
		k, err := quicwire.NewKeys(version, s, secret[:hashLen(s, len(secret))])
		if err != nil {
			continue
		}
		c.keys[sp][d] = k
		if sp == 3 {
			c.next[d] = k.Next()
		}
		return k
	}
	return nil
}

// earlyCandidates are the 0-RTT keys under each suite: the ticket's suite
// is not on the wire, so the packet's decryption picks.
func (c *Conn) earlyCandidates(h *quicwire.Header, keys *KeyLog) []*quicwire.Keys {
	secret := keys.Secret(c.ClientRandom, labels[1][ToServer])
	if secret == nil {
		return nil
	}
	var out []*quicwire.Keys
	for _, s := range []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256} {
		if k, err := quicwire.NewKeys(h.Version, s, secret[:hashLen(s, len(secret))]); err == nil {
			out = append(out, k)
		}
	}
	return out
}

func hashLen(suite uint16, n int) int {
	if suite == tls.TLS_AES_256_GCM_SHA384 {
		return min(n, 48)
	}
	return min(n, 32)
}

// readTLS reads what the handshake's messages say: the client random and
// offered suites, the chosen suite, and the server's message types.
func (c *Conn) readTLS() {
	// The random comes first: it is read as soon as it is there (0-RTT
	// packets can come before the rest of a ClientHello that takes two
	// Initials).
	if d := c.crypto[0][ToServer].data; c.ClientRandom == nil && len(d) >= 38 && d[0] == 1 {
		c.ClientRandom = append([]byte(nil), d[6:38]...)
	}
	if ch := c.crypto[0][ToServer].messages(); len(ch) > 0 && c.OfferedSuites == nil {
		_, c.OfferedSuites = parseClientHello(ch[0])
	}
	if sh := c.crypto[0][ToClient].messages(); len(sh) > 0 && c.Suite == 0 {
		c.Suite = parseServerHello(sh[0])
	}
	var types []byte
	for _, m := range c.crypto[1][ToClient].messages() {
		types = append(types, m[0])
		switch m[0] {
		case 11:
			c.Certificate = true
		case 8:
			c.EarlyAccepted = hasExtension(m[4:], 42)
		}
	}
	c.ServerMsgs = types
}

func parseClientHello(m []byte) ([]byte, []uint16) {
	// type(1) length(3) version(2) random(32) session_id<1> suites<2>
	if len(m) < 39 || m[0] != 1 {
		return nil, nil
	}
	random := append([]byte(nil), m[6:38]...)
	p := 38 + 1 + int(m[38])
	if len(m) < p+2 {
		return random, nil
	}
	n := int(binary.BigEndian.Uint16(m[p:]))
	var suites []uint16
	for i := p + 2; i+1 < p+2+n && i+1 < len(m); i += 2 {
		suites = append(suites, binary.BigEndian.Uint16(m[i:]))
	}
	return random, suites
}

// hasExtension reads EncryptedExtensions' body for an extension type.
func hasExtension(body []byte, typ uint16) bool {
	if len(body) < 2 {
		return false
	}
	n := int(binary.BigEndian.Uint16(body))
	b := body[2:min(len(body), 2+n)]
	for len(b) >= 4 {
		l := int(binary.BigEndian.Uint16(b[2:]))
		if binary.BigEndian.Uint16(b) == typ {
			return true
		}
		if len(b) < 4+l {
			break
		}
		b = b[4+l:]
	}
	return false
}

func parseServerHello(m []byte) uint16 {
	if len(m) < 39 || m[0] != 2 {
		return 0
	}
	p := 38 + 1 + int(m[38])
	if len(m) < p+2 {
		return 0
	}
	return binary.BigEndian.Uint16(m[p:])
}

type cryptoStream struct {
	parts map[uint64][]byte
	data  []byte
}

func (c *cryptoStream) add(off uint64, b []byte) {
	if c.parts == nil {
		c.parts = map[uint64][]byte{}
	}
	if off > 1<<20 {
		return
	}
	c.parts[off] = append([]byte(nil), b...)
	for again := true; again; {
		again = false
		for o, d := range c.parts {
			if o <= uint64(len(c.data)) {
				if end := o + uint64(len(d)); end > uint64(len(c.data)) {
					c.data = append(c.data, d[uint64(len(c.data))-o:]...)
				}
				delete(c.parts, o)
				again = true
			}
		}
	}
}

// messages returns the complete TLS handshake messages of the stream.
func (c *cryptoStream) messages() [][]byte {
	var out [][]byte
	b := c.data
	for len(b) >= 4 {
		n := int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		if len(b) < 4+n {
			break
		}
		out = append(out, b[:4+n])
		b = b[4+n:]
	}
	return out
}
