package quicpeer

// Receiving: the peer's datagrams, their packets opened and their frames
// processed, acknowledged as they come.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"kquic.dev/internal/quicwire"
)

// readOnce reads and processes one datagram; false if none came by deadline.
func (c *Conn) readOnce(deadline time.Time) (bool, error) {
	buf := make([]byte, 65536)
	c.pc.SetReadDeadline(deadline)
	n, from, err := c.pc.ReadFromUDP(buf)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return false, nil
		}
		return false, fmt.Errorf("quicpeer: receive: %w", err)
	}
	if c.peer != nil && !c.peer.IP.Equal(from.IP) || c.peer != nil && c.peer.Port != from.Port {
		return true, nil // another peer's datagram: not this connection's
	}
	return true, c.processDatagram(buf[:n])
}

func (c *Conn) processDatagram(b []byte) error {
	for len(b) > 0 {
		h, pnOff, n, err := quicwire.ParseHeader(b, len(c.scid))
		if err != nil {
			c.keep(Packet{Err: err, At: time.Now()})
			break
		}
		pkt := b[:n]
		b = b[n:]
		if err := c.processPacket(h, pnOff, pkt); err != nil {
			return err
		}
	}
	return c.sendAcks()
}

func (c *Conn) processPacket(h *quicwire.Header, pnOff int, pkt []byte) error {
	switch h.Type {
	case quicwire.VersionNegotiation:
		c.keep(Packet{Type: h.Type, At: time.Now()})
		return fmt.Errorf("quicpeer: the peer answered with Version Negotiation %x", h.Versions)
	case quicwire.Retry:
		return c.processRetry(h, pkt)
	}
	sp := map[quicwire.PacketType]int{quicwire.Initial: spaceInitial, quicwire.Handshake: spaceHandshake, quicwire.OneRTT: spaceApp}[h.Type]
	if h.Type == quicwire.ZeroRTT {
		return nil // a client's early data: this end takes none
	}
	s := c.spaces[sp]
	if s.recv == nil {
		if len(c.pending) < 16 {
			c.pending = append(c.pending, append([]byte(nil), pkt...))
		}
		return nil
	}
	if c.client && h.Type == quicwire.Initial && c.spaces[spaceInitial].largest < 0 {
		c.dcid = append([]byte(nil), h.SrcConnID...) // the server's choice (RFC 9000 §7.2)
	}
	keys := s.recv
	payload, err := quicwire.OpenPacket(pkt, h, pnOff, keys, s.largest)
	if err != nil && h.Type == quicwire.OneRTT && h.KeyPhase != c.recvPhase {
		// The peer's next keys: its answer to this end's update, or its
		// own update, which this end follows (RFC 9001 §6.2).
		if payload, err = quicwire.OpenPacket(pkt, h, pnOff, s.recvNext, s.largest); err == nil {
			s.recv, s.recvNext = s.recvNext, s.recvNext.Next()
			c.recvPhase = h.KeyPhase
			if c.keyPhase != c.recvPhase {
				s.send = s.send.Next()
				c.keyPhase = c.recvPhase
			}
		}
	}
	if err != nil {
		return nil // undecryptable: dropped, as a stack drops it
	}
	s.largest = max(s.largest, int64(h.PacketNumber))
	s.acked = addRange(s.acked, h.PacketNumber)
	frames, ferr := quicwire.ParseFrames(payload)
	c.keep(Packet{Type: h.Type, PN: h.PacketNumber, Frames: frames, Err: ferr, At: time.Now()})
	for _, f := range frames {
		if quicwire.IsAckEliciting(f.FrameType()) {
			s.ackPending = true
		}
		if err := c.processFrame(sp, f); err != nil {
			return err
		}
	}
	return nil
}

func (c *Conn) processRetry(h *quicwire.Header, pkt []byte) error {
	if !c.client || c.spaces[spaceInitial].largest >= 0 || c.retried {
		return nil
	}
	if quicwire.RetryIntegrityTag(h.Version, c.origDCID, pkt[:len(pkt)-16]) != h.RetryTag {
		return nil
	}
	c.keep(Packet{Type: quicwire.Retry, At: time.Now()})
	c.retried = true
	c.token = append([]byte(nil), h.Token...)
	c.dcid = append([]byte(nil), h.SrcConnID...)
	cl, sv := quicwire.InitialKeys(c.version, c.dcid)
	c.spaces[spaceInitial].send, c.spaces[spaceInitial].recv = cl, sv
	c.spaces[spaceInitial].cryptoSent = 0
	return c.flushCrypto(false)
}

func (c *Conn) retryPending() {
	p := c.pending
	c.pending = nil
	for _, pkt := range p {
		h, pnOff, _, err := quicwire.ParseHeader(pkt, len(c.scid))
		if err == nil {
			c.processPacket(h, pnOff, pkt)
		}
	}
}

func (c *Conn) processFrame(sp int, f quicwire.Frame) error {
	switch f := f.(type) {
	case quicwire.Crypto:
		return c.processCrypto(sp, f)
	case quicwire.HandshakeDone:
		if c.client {
			c.confirmed = true
		}
	case quicwire.ConnectionClose:
		if c.closed == nil {
			cc := f
			cc.Reason = append([]byte(nil), f.Reason...)
			c.closed = &cc
		}
	case quicwire.Stream:
		c.processStream(f)
	case quicwire.PathChallenge:
		return c.send(sp, quicwire.PathResponse(f))
	case quicwire.NewToken:
		c.newTokens = append(c.newTokens, append([]byte(nil), f.Token...))
	}
	return nil
}

func (c *Conn) processCrypto(sp int, f quicwire.Crypto) error {
	s := c.spaces[sp]
	if f.Offset+uint64(len(f.Data)) <= s.cryptoRead {
		return nil
	}
	if len(s.cryptoIn) < 64 {
		s.cryptoIn[f.Offset] = append([]byte(nil), f.Data...)
	}
	for {
		progressed := false
		for off, d := range s.cryptoIn {
			end := off + uint64(len(d))
			if off > s.cryptoRead {
				continue
			}
			delete(s.cryptoIn, off)
			if end > s.cryptoRead {
				level := [...]tls.QUICEncryptionLevel{tls.QUICEncryptionLevelInitial, tls.QUICEncryptionLevelHandshake, tls.QUICEncryptionLevelApplication}[sp]
				if err := c.tls.HandleData(level, d[s.cryptoRead-off:]); err != nil {
					return fmt.Errorf("quicpeer: TLS: %w", err)
				}
				s.cryptoRead = end
			}
			progressed = true
		}
		if !progressed {
			break
		}
	}
	return c.drainTLS()
}

func (c *Conn) processStream(f quicwire.Stream) {
	rs := c.streams[f.StreamID]
	if rs == nil {
		if len(c.streams) >= 1024 {
			return
		}
		rs = &recvStream{parts: map[uint64][]byte{}}
		c.streams[f.StreamID] = rs
	}
	if f.Fin {
		rs.fin, rs.size = true, f.Offset+uint64(len(f.Data))
	}
	if len(rs.parts) < 256 && f.Offset+uint64(len(f.Data)) > uint64(len(rs.data)) {
		rs.parts[f.Offset] = append([]byte(nil), f.Data...)
	}
	for again := true; again; {
		again = false
		for off, d := range rs.parts {
			if off <= uint64(len(rs.data)) {
				if end := off + uint64(len(d)); end > uint64(len(rs.data)) && end-off <= 1<<24 {
					rs.data = append(rs.data, d[uint64(len(rs.data))-off:]...)
				}
				delete(rs.parts, off)
				again = true
			}
		}
	}
}

func addRange(rs []quicwire.PNRange, pn uint64) []quicwire.PNRange {
	for i, r := range rs {
		switch {
		case pn >= r.Smallest && pn <= r.Largest:
			return rs
		case pn == r.Largest+1:
			rs[i].Largest = pn
			if i > 0 && rs[i-1].Smallest == pn+1 {
				rs[i-1].Smallest = rs[i].Smallest
				return slices.Delete(rs, i, i+1)
			}
			return rs
		case pn+1 == r.Smallest:
			rs[i].Smallest = pn
			if i+1 < len(rs) && rs[i+1].Largest+1 == pn {
				rs[i].Smallest = rs[i+1].Smallest
				return slices.Delete(rs, i+1, i+2)
			}
			return rs
		case pn > r.Largest:
			return slices.Insert(rs, i, quicwire.PNRange{Smallest: pn, Largest: pn})
		}
	}
	rs = append(rs, quicwire.PNRange{Smallest: pn, Largest: pn})
	if len(rs) > 32 { // an ACK frame need not list everything
		rs = rs[:32]
	}
	return rs
}

func (c *Conn) sendAcks() error {
	if c.closed != nil {
		return nil
	}
	for sp, s := range c.spaces {
		if !s.ackPending || s.send == nil {
			continue
		}
		s.ackPending = false
		if err := c.send(sp, quicwire.NewAck(0, s.acked...)); err != nil {
			return err
		}
	}
	return nil
}

func (c *Conn) keep(p Packet) {
	if len(c.packets) >= c.cfg.MaxPackets {
		c.packets = c.packets[1:]
		c.dropped++
	}
	c.packets = append(c.packets, p)
}
