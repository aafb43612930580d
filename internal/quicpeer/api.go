package quicpeer

import (
	"context"
	"fmt"
	"net"
	"time"

	"kquic.dev/internal/quicwire"
)

// Send sends frames in one packet of type t (Initial, Handshake or 1-RTT;
// 0-RTT where this end has early keys), encrypted with the connection's
// current keys. The frames are written as they are: nothing checks them.
func (c *Conn) Send(t quicwire.PacketType, frames ...quicwire.Frame) error {
	switch t {
	case quicwire.Initial:
		return c.send(spaceInitial, frames...)
	case quicwire.Handshake:
		return c.send(spaceHandshake, frames...)
	case quicwire.OneRTT:
		return c.send(spaceApp, frames...)
	case quicwire.ZeroRTT:
		if c.zeroRTT == nil {
			return fmt.Errorf("quicpeer: no 0-RTT keys (the session was not resumed with early data)")
		}
		s := c.spaces[spaceApp]
		b := quicwire.AppendPacket(nil, c.header(quicwire.ZeroRTT), s.pn, quicwire.AppendFrames(nil, frames...), c.zeroRTT)
		s.pn++
		return c.write(b)
	}
	return fmt.Errorf("quicpeer: cannot send a %s packet with Send", t)
}

// SendHeader is Send with the packet's header changed by mod before it is
// protected: reserved bits, the key phase, the packet number length.
func (c *Conn) SendHeader(t quicwire.PacketType, mod func(*quicwire.Header), frames ...quicwire.Frame) error {
	i, ok := map[quicwire.PacketType]int{quicwire.Initial: spaceInitial, quicwire.Handshake: spaceHandshake, quicwire.OneRTT: spaceApp}[t]
	if !ok || c.spaces[i].send == nil {
		return fmt.Errorf("quicpeer: no keys to send a %s packet", t)
	}
	s := c.spaces[i]
	h := c.header(t)
	mod(h)
	b := quicwire.AppendPacket(nil, h, s.pn, quicwire.AppendFrames(nil, frames...), s.send)
	s.pn++
	return c.write(b)
}

// Seal returns a protected packet of type t holding payload, with the next
// packet number of its space, without sending it: for coalescing packets or
// mutating them before SendDatagram.
func (c *Conn) Seal(t quicwire.PacketType, payload []byte) ([]byte, error) {
	sp := map[quicwire.PacketType]int{quicwire.Initial: spaceInitial, quicwire.Handshake: spaceHandshake, quicwire.OneRTT: spaceApp}
	i, ok := sp[t]
	if !ok || c.spaces[i].send == nil {
		return nil, fmt.Errorf("quicpeer: no keys to seal a %s packet", t)
	}
	s := c.spaces[i]
	b := quicwire.AppendPacket(nil, c.header(t), s.pn, payload, s.send)
	s.pn++
	return b, nil
}

// SendDatagram sends b as one UDP datagram, as it is.
func (c *Conn) SendDatagram(b []byte) error { return c.write(b) }

// UpdateKeys starts a key update (RFC 9001 §6): the packets sent after it
// carry the next key phase.
func (c *Conn) UpdateKeys() {
	s := c.spaces[spaceApp]
	s.send = s.send.Next()
	c.keyPhase = !c.keyPhase
}

// Poll receives and acknowledges packets for up to d, or until done returns
// true for one of them, and returns the packets received meanwhile. It
// returns early, without an error, once the peer has closed the connection.
func (c *Conn) Poll(d time.Duration, done func(Packet) bool) ([]Packet, error) {
	start := len(c.packets)
	dropped := c.dropped
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && c.closed == nil {
		if _, err := c.readOnce(deadline); err != nil {
			return c.since(start, dropped), err
		}
		if done != nil {
			for _, p := range c.since(start, dropped) {
				if done(p) {
					return c.since(start, dropped), nil
				}
			}
		}
	}
	return c.since(start, dropped), nil
}

func (c *Conn) since(start, dropped int) []Packet {
	start -= c.dropped - dropped
	if start < 0 {
		start = 0
	}
	return append([]Packet(nil), c.packets[start:]...)
}

// WaitClose polls for up to d for the peer's CONNECTION_CLOSE and returns
// it, or nil if none came.
func (c *Conn) WaitClose(d time.Duration) (*quicwire.ConnectionClose, error) {
	_, err := c.Poll(d, nil)
	return c.closed, err
}

// Closed is the peer's CONNECTION_CLOSE, nil while none came.
func (c *Conn) Closed() *quicwire.ConnectionClose { return c.closed }

// Packets are the packets received so far (the newest Config.MaxPackets).
func (c *Conn) Packets() []Packet { return append([]Packet(nil), c.packets...) }

// StreamData is what the peer sent on a stream so far, in order, and
// whether its FIN came with all the data before it.
func (c *Conn) StreamData(id uint64) ([]byte, bool) {
	rs := c.streams[id]
	if rs == nil {
		return nil, false
	}
	return rs.data, rs.fin && uint64(len(rs.data)) == rs.size
}

// Largest is the largest packet number received in the space of packet
// type t (0-RTT and 1-RTT share one), -1 for none yet.
func (c *Conn) Largest(t quicwire.PacketType) int64 {
	switch t {
	case quicwire.Initial:
		return c.spaces[spaceInitial].largest
	case quicwire.Handshake:
		return c.spaces[spaceHandshake].largest
	}
	return c.spaces[spaceApp].largest
}

// PeerParams are the peer's transport parameters.
func (c *Conn) PeerParams() quicwire.TransportParameters { return c.peerParams }

// NewTokens are the NEW_TOKEN frames' tokens received.
func (c *Conn) NewTokens() [][]byte { return c.newTokens }

// Version is the connection's QUIC version.
func (c *Conn) Version() uint32 { return c.version }

// LocalAddr is this end's UDP address.
func (c *Conn) LocalAddr() net.Addr { return c.pc.LocalAddr() }

// Close sends CONNECTION_CLOSE with an application error code and releases
// the socket (a client's; a server connection leaves its listener's).
func (c *Conn) Close(code uint64) error {
	err := c.send(spaceApp, quicwire.ConnectionClose{App: true, ErrorCode: code})
	c.Abort()
	return err
}

// Abort releases the connection's socket without a word to the peer.
func (c *Conn) Abort() {
	if c.client {
		c.pc.Close()
	}
	if c.tls != nil {
		c.tls.Close()
	}
}

// Listener accepts connections on a UDP socket, one at a time: the
// connection it returns reads from the listener's socket until the next
// Accept.
type Listener struct {
	cfg Config
	pc  *net.UDPConn
}

// Listen opens a UDP socket on addr ("127.0.0.1:0").
func Listen(addr string, cfg Config) (*Listener, error) {
	laddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("quicpeer: listen %s: %w", addr, err)
	}
	pc, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, fmt.Errorf("quicpeer: listen %s: %w", addr, err)
	}
	return &Listener{cfg: cfg, pc: pc}, nil
}

// Addr is the listener's UDP address.
func (l *Listener) Addr() *net.UDPAddr { return l.pc.LocalAddr().(*net.UDPAddr) }

// Close closes the socket.
func (l *Listener) Close() error { return l.pc.Close() }

// Accept waits for a client's Initial and completes the handshake with it,
// HANDSHAKE_DONE sent.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	buf := make([]byte, 65536)
	for {
		if d, ok := ctx.Deadline(); ok {
			l.pc.SetReadDeadline(d)
		} else {
			l.pc.SetReadDeadline(time.Time{})
		}
		n, from, err := l.pc.ReadFromUDP(buf)
		if err != nil {
			return nil, fmt.Errorf("quicpeer: accept: %w", err)
		}
		h, _, _, err := quicwire.ParseHeader(buf[:n], 0)
		if err != nil || h.Type != quicwire.Initial || n < 1200 {
			continue // not a client's first Initial
		}
		c := newConn(l.cfg, l.pc, false)
		c.peer = from
		c.version = h.Version
		c.origDCID = append([]byte(nil), h.DstConnID...)
		c.dcid = append([]byte(nil), h.SrcConnID...)
		c.setInitialKeys()
		c.tls = tls13Server(c)
		if err := c.tls.Start(ctx); err != nil {
			return nil, fmt.Errorf("quicpeer: accept: TLS: %w", err)
		}
		if err := c.processDatagram(buf[:n]); err != nil {
			return nil, fmt.Errorf("quicpeer: accept from %s: %w", from, err)
		}
		if err := c.handshake(ctx); err != nil {
			return nil, fmt.Errorf("quicpeer: accept from %s: %w", from, err)
		}
		return c, nil
	}
}
