package interop

import (
	"bytes"
	"fmt"
	"slices"

	"kquic.dev/internal/quicwire"
)

// Conn is what the trace saw of one connection.
type Conn struct {
	// Flow is the relay's number of the client's address.
	Flow int
	// ODCID is the client's first Destination Connection ID.
	ODCID []byte
	// ClientCIDs and ServerCIDs are the connection IDs each end chose.
	ClientCIDs, ServerCIDs [][]byte
	ClientRandom           []byte
	// OfferedSuites are the ClientHello's cipher suites; Suite the
	// ServerHello's.
	OfferedSuites []uint16
	Suite         uint16
	// Versions are the long header versions seen each way.
	Versions [2]map[uint32]int
	// Retry: the server sent a Retry; TokenEchoed: a client Initial
	// after it carried its token.
	Retry, TokenEchoed bool
	retryToken         []byte
	retryDCID          []byte
	// Certificate: the server's handshake had a Certificate message
	// (none in a resumed one); Handshake lists the server's handshake
	// message types.
	Certificate bool
	ServerMsgs  []byte
	// ZeroRTTOnWire counts the client's 0-RTT packets; ZeroRTTPackets
	// those that decrypted (a key log with CLIENT_EARLY_TRAFFIC_SECRET:
	// crypto/tls writes none) and ZeroRTTStreamBytes the stream data in
	// them. EarlyAccepted: the server's EncryptedExtensions accepted
	// early data.
	ZeroRTTOnWire, ZeroRTTPackets, ZeroRTTStreamBytes int
	EarlyAccepted                                     bool
	// OneRTT counts decrypted 1-RTT packets each way; KeyPhase1 how many
	// of them carried key phase 1 (a key update happened).
	OneRTT, KeyPhase1 [2]int
	// PathChallenges and PathResponses count those frames each way, and
	// Paths the relay paths the client's packets came by.
	PathChallenges, PathResponses [2]int
	Paths                         map[int]bool
	// Undecryptable counts packets no key opened, each way.
	Undecryptable [2]int
	// Before address validation (the server's first Handshake packet
	// from the client): bytes the server sent and received.
	SentBeforeValid, RecvBeforeValid int
	validated                        bool
	HandshakeDone                    bool
	StreamBytes                      [2]uint64
	// Frames counts the frames each way by name.
	Frames [2]map[string]int
	// LoneFIN are the streams, each way, whose end (FIN) first arrived in
	// a STREAM frame of its own, without data, after the stream's data;
	// Answered the streams that carried data each way. Counted from
	// delivered datagrams.
	LoneFIN, Answered [2]map[uint64]bool
	finSeen           [2]map[uint64]bool

	keys    [4][2]*quicwire.Keys // Initial, 0-RTT, Handshake, 1-RTT; per direction
	next    [2]*quicwire.Keys    // 1-RTT keys after the next update
	phase   [2]bool
	largest [3][2]int64
	crypto  [3][2]cryptoStream
}

// Trace is what a case's datagrams say, decrypted.
type Trace struct {
	Conns []*Conn
	// Datagrams counts them, and Dropped those the relay dropped.
	Datagrams, Dropped int
	// Incomplete: the relay stopped recording (MaxRecords).
	Incomplete bool
}

// Analyze decrypts and reads the records with the key log's secrets.
func Analyze(recs []Record, keys *KeyLog) *Trace {
	t := &Trace{Incomplete: len(recs) >= MaxRecords}
	for _, r := range recs {
		t.Datagrams++
		if r.Dropped {
			t.Dropped++
		}
		t.datagram(r, keys)
	}
	return t
}

func (t *Trace) find(d Dir, dcid []byte, prefix bool, flow int) *Conn {
	for _, c := range t.Conns {
		ids := c.ServerCIDs
		if d == ToServer {
			ids = append(append(ids[:len(ids):len(ids)], c.ODCID), c.retryDCID)
		} else {
			ids = c.ClientCIDs
		}
		for _, id := range ids {
			if len(id) > 0 && (bytes.Equal(id, dcid) || prefix && bytes.HasPrefix(dcid, id)) {
				return c
			}
		}
	}
	if d == ToClient {
		// A client with an empty connection ID is known by its address:
		// the newest connection of its flow.
		for i := len(t.Conns) - 1; i >= 0; i-- {
			if c := t.Conns[i]; c.Flow == flow && c.emptyClientCID() {
				return c
			}
		}
	}
	return nil
}

func (c *Conn) emptyClientCID() bool {
	for _, id := range c.ClientCIDs {
		if len(id) == 0 {
			return true
		}
	}
	return false
}

func (t *Trace) datagram(r Record, keys *KeyLog) {
	b := r.Data
	var first *Conn
	for len(b) > 0 {
		var c *Conn
		var h *quicwire.Header
		var pnOff, n int
		var err error
		if b[0]&0x80 != 0 {
			if h, pnOff, n, err = quicwire.ParseHeader(b, 0); err != nil {
				return
			}
			c = t.find(r.Dir, h.DstConnID, false, r.Flow)
			if c == nil && r.Dir == ToServer && h.Type == quicwire.Initial {
				c = &Conn{ODCID: append([]byte(nil), h.DstConnID...), Paths: map[int]bool{}, Flow: r.Flow}
				for i := range c.largest {
					c.largest[i] = [2]int64{-1, -1}
				}
				c.Versions = [2]map[uint32]int{{}, {}}
				c.Frames = [2]map[string]int{{}, {}}
				c.LoneFIN, c.Answered, c.finSeen = [2]map[uint64]bool{{}, {}}, [2]map[uint64]bool{{}, {}}, [2]map[uint64]bool{{}, {}}
				t.Conns = append(t.Conns, c)
			}
		} else {
			c = t.find(r.Dir, b[1:], true, r.Flow)
			if c == nil {
				return
			}
			cid := c.ServerCIDs
			if r.Dir == ToClient {
				cid = c.ClientCIDs
			}
			l := 0
			for _, id := range cid {
				if bytes.HasPrefix(b[1:], id) {
					l = len(id)
				}
			}
			if h, pnOff, n, err = quicwire.ParseHeader(b, l); err != nil {
				return
			}
		}
		if c == nil {
			return
		}
		if first == nil {
			first = c
			c.account(r)
		}
		c.packet(r, h, b[:n], pnOff, keys)
		b = b[n:]
	}
}

// account counts the bytes before address validation.
func (c *Conn) account(r Record) {
	if c.validated {
		return
	}
	if r.Dir == ToClient {
		c.SentBeforeValid += len(r.Data)
	} else if !r.Dropped {
		c.RecvBeforeValid += len(r.Data)
	}
}

func spaceOf(t quicwire.PacketType) int {
	switch t {
	case quicwire.Initial:
		return 0
	case quicwire.ZeroRTT:
		return 1
	case quicwire.Handshake:
		return 2
	}
	return 3
}

func (c *Conn) packet(r Record, h *quicwire.Header, pkt []byte, pnOff int, keys *KeyLog) {
	d := r.Dir
	switch h.Type {
	case quicwire.Retry:
		// The client takes the first Retry that reaches it whole (a
		// dropped or corrupted one it never saw or discards).
		if d == ToClient && !c.Retry && !r.Dropped && len(pkt) >= 16 &&
			quicwire.RetryIntegrityTag(h.Version, c.ODCID, pkt[:len(pkt)-16]) == h.RetryTag {
			c.Retry = true
			c.retryToken = append([]byte(nil), h.Token...)
			c.retryDCID = append([]byte(nil), h.SrcConnID...)
			c.keys[0] = [2]*quicwire.Keys{}
		}
		return
	case quicwire.VersionNegotiation:
		return
	}
	if h.IsLong() {
		c.Versions[d][h.Version]++
		src := append([]byte(nil), h.SrcConnID...)
		if d == ToServer {
			c.ClientCIDs = addID(c.ClientCIDs, src)
			if h.Type == quicwire.Initial && c.Retry && len(c.retryToken) > 0 && bytes.Equal(h.Token, c.retryToken) {
				c.TokenEchoed = true
			}
		} else {
			c.ServerCIDs = addID(c.ServerCIDs, src)
		}
	}
	sp := spaceOf(h.Type)
	if sp == 1 {
		c.ZeroRTTOnWire++
	}
	payload, ok := c.open(pkt, h, pnOff, sp, d, keys)
	if !ok {
		c.Undecryptable[d]++
		return
	}
	if h.Type == quicwire.Handshake && d == ToServer && !r.Dropped {
		c.validated = true
	}
	if sp == 3 {
		c.OneRTT[d]++
		if h.KeyPhase {
			c.KeyPhase1[d]++
		}
		if d == ToServer {
			c.Paths[r.Path] = true
		}
	}
	if sp == 1 {
		c.ZeroRTTPackets++
	}
	c.countFrames(d, sp, payload, !r.Dropped)
}

// open decrypts a packet of number space sp going d with the keys the
// trace has for it (the 0-RTT candidates, the next key phase's), keeping
// those that opened it and its number as the largest seen: its payload,
// or false.
func (c *Conn) open(pkt []byte, h *quicwire.Header, pnOff, sp int, d Dir, keys *KeyLog) ([]byte, bool) {
	k := c.keysFor(sp, d, h, keys)
	if k == nil {
		return nil, false
	}
	pnSpace := map[int]int{0: 0, 1: 2, 2: 1, 3: 2}[sp]
	cands := []*quicwire.Keys{k}
	if sp == 1 && c.keys[1][d] == nil {
		cands = c.earlyCandidates(h, keys)
	}
	var payload []byte
	var err error
	for _, ck := range cands {
		if payload, err = quicwire.OpenPacket(pkt, h, pnOff, ck, c.largest[pnSpace][d]); err == nil {
			c.keys[sp][d] = ck
			break
		}
	}
	if err != nil && sp == 3 && c.next[d] != nil && h.KeyPhase != c.phase[d] {
		if payload, err = quicwire.OpenPacket(pkt, h, pnOff, c.next[d], c.largest[pnSpace][d]); err == nil {
			c.keys[3][d], c.next[d] = c.next[d], c.next[d].Next()
			c.phase[d] = h.KeyPhase
		}
	}
	if err != nil {
		return nil, false
	}
	c.largest[pnSpace][d] = max(c.largest[pnSpace][d], int64(h.PacketNumber))
	return payload, true
}

// countFrames counts the frames of a packet's payload going d in number
// space sp, and follows the TLS handshake in its CRYPTO frames; delivered
// says the relay passed the packet on.
func (c *Conn) countFrames(d Dir, sp int, payload []byte, delivered bool) {
	frames, _ := quicwire.ParseFrames(payload)
	for _, f := range frames {
		c.Frames[d][quicwire.FrameName(f.FrameType())]++
		switch f := f.(type) {
		case quicwire.Crypto:
			if sp == 0 || sp == 2 {
				cs := &c.crypto[map[int]int{0: 0, 2: 1}[sp]][d]
				cs.add(f.Offset, f.Data)
				c.readTLS()
			}
		case quicwire.Stream:
			c.StreamBytes[d] += uint64(len(f.Data))
			if delivered {
				c.streamFrame(d, f)
			}
			if sp == 1 {
				c.ZeroRTTStreamBytes += len(f.Data)
			}
		case quicwire.PathChallenge:
			c.PathChallenges[d]++
		case quicwire.PathResponse:
			c.PathResponses[d]++
		case quicwire.HandshakeDone:
			c.HandshakeDone = true
		case quicwire.NewConnectionID:
			if d == ToClient {
				c.ServerCIDs = addID(c.ServerCIDs, append([]byte(nil), f.ConnID...))
			} else {
				c.ClientCIDs = addID(c.ClientCIDs, append([]byte(nil), f.ConnID...))
			}
		}
	}
}

// streamFrame notes a delivered STREAM frame's data and a FIN that came
// alone.
func (c *Conn) streamFrame(d Dir, f quicwire.Stream) {
	if len(f.Data) > 0 {
		c.Answered[d][f.StreamID] = true
	}
	if f.Fin && !c.finSeen[d][f.StreamID] {
		c.finSeen[d][f.StreamID] = true
		if len(f.Data) == 0 && f.Offset > 0 {
			c.LoneFIN[d][f.StreamID] = true
		}
	}
}

// UnansweredLoneFINs are the client's request streams (bidirectional) whose
// FIN came to the server alone (LoneFIN) and on which the server sent no
// data back, in order.
func (c *Conn) UnansweredLoneFINs() []uint64 {
	var out []uint64
	for id := range c.LoneFIN[ToServer] {
		if id%4 == 0 && !c.Answered[ToClient][id] {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func addID(ids [][]byte, id []byte) [][]byte {
	for _, x := range ids {
		if bytes.Equal(x, id) {
			return ids
		}
	}
	return append(ids, id)
}

// String sums the connection up for a failure's evidence.
func (c *Conn) String() string {
	return fmt.Sprintf("conn %x: suite 0x%04x, versions c→s %v s→c %v, retry %v (token echoed %v), certificate %v, 0-RTT %d packets, 1-RTT %v (key phase 1: %v), path challenges %v responses %v, undecryptable %v",
		c.ODCID, c.Suite, c.Versions[ToServer], c.Versions[ToClient], c.Retry, c.TokenEchoed, c.Certificate, c.ZeroRTTPackets,
		c.OneRTT, c.KeyPhase1, c.PathChallenges, c.PathResponses, c.Undecryptable)
}
