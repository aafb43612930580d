//go:build linux

package ktls

import (
	"net"
	"sync"
)

// recordConn is the net.Conn crypto/tls runs its handshake on. Its Read
// never returns bytes past the end of the current TLS record: it hands out a
// record's 5-byte header, then at most the rest of that record. crypto/tls
// reads only the records it needs to finish the handshake, so when the
// handshake returns, every byte the peer sent after its last handshake record
// (application data in the same segment as Finished, a NewSessionTicket, a
// KeyUpdate) is still in the socket for the kernel to decrypt.
//
// It also taps the plaintext ServerHello (read by a client, written by a
// server) for the server random, which TLS 1.2 key expansion needs and
// crypto/tls does not expose.
type recordConn struct {
	net.Conn

	rmu         sync.Mutex
	rs          recordScanner // position in the inbound record stream
	passthrough bool          // after the handshake, in userspace fallback

	wmu sync.Mutex
	ws  recordScanner // position in the outbound record stream (for the tap)

	tap helloTap
}

func newRecordConn(c net.Conn, isClient bool) *recordConn {
	rc := &recordConn{Conn: c}
	if isClient {
		rc.rs.tap = &rc.tap
	} else {
		rc.ws.tap = &rc.tap
	}
	return rc
}

func (rc *recordConn) Read(p []byte) (int, error) {
	rc.rmu.Lock()
	defer rc.rmu.Unlock()
	if rc.passthrough {
		return rc.Conn.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if lim := rc.rs.limit(); len(p) > lim {
		p = p[:lim]
	}
	n, err := rc.Conn.Read(p)
	rc.rs.feed(p[:n])
	return n, err
}

func (rc *recordConn) Write(p []byte) (int, error) {
	rc.wmu.Lock()
	defer rc.wmu.Unlock()
	if rc.ws.tap != nil && !rc.ws.tap.done {
		rc.ws.feed(p)
	}
	return rc.Conn.Write(p)
}

// atBoundary reports whether the inbound stream is between records.
func (rc *recordConn) atBoundary() bool {
	rc.rmu.Lock()
	defer rc.rmu.Unlock()
	return rc.rs.atBoundary()
}

func (rc *recordConn) setPassthrough() {
	rc.rmu.Lock()
	rc.passthrough = true
	rc.rmu.Unlock()
}

func (rc *recordConn) serverRandom() []byte {
	rc.rmu.Lock()
	defer rc.rmu.Unlock()
	rc.wmu.Lock()
	defer rc.wmu.Unlock()
	if !rc.tap.done || rc.tap.random == nil {
		return nil
	}
	return rc.tap.random
}

const recordHeaderLen = 5

// recordScanner follows a stream of TLS records fed in arbitrary pieces.
type recordScanner struct {
	hdr  [recordHeaderLen]byte
	hdrN int // header bytes seen of the current record
	body int // body bytes still to come of the current record
	tap  *helloTap
}

// limit is how many bytes may be read without crossing a record boundary.
func (s *recordScanner) limit() int {
	if s.hdrN < recordHeaderLen {
		return recordHeaderLen - s.hdrN
	}
	return s.body
}

func (s *recordScanner) atBoundary() bool { return s.hdrN == 0 }

func (s *recordScanner) feed(p []byte) {
	for len(p) > 0 {
		if s.hdrN < recordHeaderLen {
			n := copy(s.hdr[s.hdrN:], p)
			s.hdrN += n
			p = p[n:]
			if s.hdrN == recordHeaderLen {
				s.body = int(s.hdr[3])<<8 | int(s.hdr[4])
				if s.tap != nil {
					s.tap.record(s.hdr[0])
				}
				if s.body == 0 {
					s.hdrN = 0
				}
			}
			continue
		}
		n := min(len(p), s.body)
		if s.tap != nil {
			s.tap.body(s.hdr[0], p[:n])
		}
		s.body -= n
		p = p[n:]
		if s.body == 0 {
			s.hdrN = 0
		}
	}
}

// helloTap collects the random of the first plaintext ServerHello.
type helloTap struct {
	done   bool
	msg    []byte // handshake bytes so far
	random []byte
}

func (t *helloTap) record(typ byte) {
	if typ != recordHandshake && !t.done {
		// Anything else (ChangeCipherSpec, encrypted records) comes after
		// the plaintext ServerHello, or there is none to find.
		t.done = true
	}
}

func (t *helloTap) body(typ byte, p []byte) {
	if t.done || typ != recordHandshake {
		return
	}
	const need = 4 + 2 + 32 // handshake header, legacy_version, random
	t.msg = append(t.msg, p[:min(len(p), need-len(t.msg))]...)
	if len(t.msg) < need {
		return
	}
	if t.msg[0] == 2 { // server_hello
		t.random = append([]byte(nil), t.msg[6:need]...)
	}
	t.done = true
}
