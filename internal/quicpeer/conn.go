package quicpeer

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"kquic.dev/internal/quicwire"
)

// Config configures an endpoint. Zero values take the defaults named.
type Config struct {
	// TLS is the TLS configuration (TLS 1.3 is forced); NextProtos must
	// hold the ALPN the peer expects.
	TLS *tls.Config
	// Version is the QUIC version of the client's first Initial; 0 is
	// version 1.
	Version uint32
	// Params replace or add to the default transport parameters (see
	// DefaultParams); Omit removes defaults by ID. Both may build
	// parameters the RFC forbids.
	Params quicwire.TransportParameters
	Omit   []uint64
	// AppendParams go after all the others, as they are (a duplicate
	// included).
	AppendParams quicwire.TransportParameters
	// ConnIDLen is the length of the connection IDs this end chooses
	// (default 8).
	ConnIDLen int
	// Token is sent in the client's first Initial.
	Token []byte
	// HandshakeFrames are sent before this end's first handshake data in
	// a packet of the type given (frames the RFC forbids there included),
	// in the same packet as that data.
	HandshakeFrames map[quicwire.PacketType][]quicwire.Frame
	// MaxPackets bounds the packets kept for the caller (default 4096;
	// the oldest are dropped past it, and Dropped counts them).
	MaxPackets int
}

// DefaultParams are the transport parameters an endpoint sends unless
// Config says otherwise; the connection ID parameters are added for the
// connection.
func DefaultParams() quicwire.TransportParameters {
	return quicwire.TransportParameters{
		quicwire.VarintParam(quicwire.ParamMaxIdleTimeout, 30000),
		quicwire.VarintParam(quicwire.ParamInitialMaxData, 1<<24),
		quicwire.VarintParam(quicwire.ParamInitialMaxStreamDataBidiLocal, 1<<22),
		quicwire.VarintParam(quicwire.ParamInitialMaxStreamDataBidiRemote, 1<<22),
		quicwire.VarintParam(quicwire.ParamInitialMaxStreamDataUni, 1<<22),
		quicwire.VarintParam(quicwire.ParamInitialMaxStreamsBidi, 100),
		quicwire.VarintParam(quicwire.ParamInitialMaxStreamsUni, 100),
	}
}

// Packet is one packet received, decrypted and decoded.
type Packet struct {
	Type   quicwire.PacketType
	PN     uint64
	Frames []quicwire.Frame
	// Err is set for a packet that did not decode: Frames holds those
	// before the error.
	Err error
	At  time.Time
}

// ErrClosed is returned by the calls that need the connection once the
// peer has closed it; the peer's CONNECTION_CLOSE is in Closed.
var ErrClosed = errors.New("quicpeer: the peer closed the connection")

const (
	spaceInitial = iota
	spaceHandshake
	spaceApp
)

type space struct {
	send, recv *quicwire.Keys
	recvNext   *quicwire.Keys // 1-RTT: the keys after the peer's next key update
	pn         uint64
	largest    int64
	acked      []quicwire.PNRange // received, descending
	ackPending bool
	cryptoIn   map[uint64][]byte
	cryptoRead uint64
	cryptoOut  []byte
	cryptoSent uint64
	extraSent  bool // Config.HandshakeFrames went
}

// Conn is one connection of an endpoint.
type Conn struct {
	cfg        Config
	pc         *net.UDPConn
	peer       *net.UDPAddr
	client     bool
	version    uint32
	tls        *tls.QUICConn
	origDCID   []byte
	dcid, scid []byte
	token      []byte
	spaces     [3]*space
	zeroRTT    *quicwire.Keys
	keyPhase   bool // the key phase this end sends
	recvPhase  bool // the key phase of the peer's current keys

	handshakeDone bool // TLS completed
	confirmed     bool // HANDSHAKE_DONE sent or received
	peerParams    quicwire.TransportParameters
	packets       []Packet
	dropped       int
	pending       [][]byte // packets whose keys had not come yet
	closed        *quicwire.ConnectionClose
	newTokens     [][]byte
	streams       map[uint64]*recvStream
	retried       bool // a client that took a Retry takes no other (RFC 9000 §17.2.5.2)
}

type recvStream struct {
	data  []byte
	parts map[uint64][]byte
	fin   bool
	size  uint64
}

func newConn(cfg Config, pc *net.UDPConn, client bool) *Conn {
	if cfg.ConnIDLen == 0 {
		cfg.ConnIDLen = 8
	}
	if cfg.MaxPackets == 0 {
		cfg.MaxPackets = 4096
	}
	c := &Conn{cfg: cfg, pc: pc, client: client, version: cfg.Version, streams: map[uint64]*recvStream{}}
	if c.version == 0 {
		c.version = quicwire.Version1
	}
	for i := range c.spaces {
		c.spaces[i] = &space{largest: -1, cryptoIn: map[uint64][]byte{}}
	}
	c.scid = randomID(cfg.ConnIDLen)
	return c
}

func randomID(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func (c *Conn) tlsConfig() *tls.Config {
	t := c.cfg.TLS.Clone()
	if t == nil {
		t = &tls.Config{}
	}
	t.MinVersion = tls.VersionTLS13
	return t
}

func (c *Conn) transportParams() []byte {
	ps := DefaultParams()
	for _, p := range c.cfg.Params {
		ps = ps.Set(p)
	}
	ps = ps.Set(quicwire.TransportParameter{ID: quicwire.ParamInitialSourceConnectionID, Value: c.scid})
	if !c.client {
		ps = ps.Set(quicwire.TransportParameter{ID: quicwire.ParamOriginalDestinationConnectionID, Value: c.origDCID})
	}
	for _, p := range c.cfg.Params { // an explicit value wins over the connection's own
		ps = ps.Set(p)
	}
	for _, id := range c.cfg.Omit {
		ps = ps.Without(id)
	}
	return append(ps, c.cfg.AppendParams...).Append(nil)
}

// Dial starts a connection to addr ("host:port" over UDP) and completes its
// handshake, including the peer's HANDSHAKE_DONE.
func Dial(ctx context.Context, addr string, cfg Config) (*Conn, error) {
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("quicpeer: dial %s: %w", addr, err)
	}
	pc, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		return nil, fmt.Errorf("quicpeer: dial %s: %w", addr, err)
	}
	c := newConn(cfg, pc, true)
	c.token = cfg.Token
	c.origDCID = randomID(8)
	c.dcid = c.origDCID
	c.setInitialKeys()
	tc := c.tlsConfig()
	if tc.ServerName == "" {
		tc.ServerName, _, _ = net.SplitHostPort(addr)
	}
	c.tls = tls.QUICClient(&tls.QUICConfig{TLSConfig: tc})
	c.tls.SetTransportParameters(c.transportParams())
	if err := c.tls.Start(ctx); err != nil {
		pc.Close()
		return nil, fmt.Errorf("quicpeer: dial %s: TLS: %w", addr, err)
	}
	if err := c.handshake(ctx); err != nil {
		c.Abort()
		return nil, fmt.Errorf("quicpeer: dial %s: %w", addr, err)
	}
	return c, nil
}

func (c *Conn) setInitialKeys() {
	cl, sv := quicwire.InitialKeys(c.version, c.origDCID)
	if c.client {
		c.spaces[spaceInitial].send, c.spaces[spaceInitial].recv = cl, sv
	} else {
		c.spaces[spaceInitial].send, c.spaces[spaceInitial].recv = sv, cl
	}
}

// handshake runs until the handshake is confirmed, retransmitting this
// end's handshake data when nothing arrives for a while.
func (c *Conn) handshake(ctx context.Context) error {
	if err := c.drainTLS(); err != nil {
		return err
	}
	if err := c.flushCrypto(false); err != nil {
		return err
	}
	pto := 200 * time.Millisecond
	for !c.confirmed || (c.client && !c.handshakeDone) {
		if c.closed != nil {
			return &PeerClosedError{Close: *c.closed}
		}
		deadline := time.Now().Add(pto)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		got, err := c.readOnce(deadline)
		if err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("handshake: %w (TLS done: %v, confirmed: %v)", ctx.Err(), c.handshakeDone, c.confirmed)
		}
		if !got {
			if err := c.flushCrypto(true); err != nil {
				return err
			}
			pto = min(2*pto, 2*time.Second)
			continue
		}
		if err := c.flushCrypto(false); err != nil {
			return err
		}
	}
	return nil
}

// flushCrypto sends the handshake data not sent yet, or all of it again.
func (c *Conn) flushCrypto(again bool) error {
	for sp, s := range c.spaces {
		from := s.cryptoSent
		if again {
			if c.handshakeDone && sp != spaceApp {
				continue
			}
			from = 0
		}
		for off := from; off < uint64(len(s.cryptoOut)); {
			end := min(off+1000, uint64(len(s.cryptoOut)))
			var frames []quicwire.Frame
			if off == 0 && !s.extraSent {
				frames = c.cfg.HandshakeFrames[spaceType(sp)]
				s.extraSent = true
			}
			frames = append(frames[:len(frames):len(frames)], quicwire.Crypto{Offset: off, Data: s.cryptoOut[off:end]})
			if err := c.send(sp, frames...); err != nil {
				return err
			}
			off = end
		}
		s.cryptoSent = uint64(len(s.cryptoOut))
	}
	return nil
}

func levelSpace(l tls.QUICEncryptionLevel) int {
	switch l {
	case tls.QUICEncryptionLevelInitial:
		return spaceInitial
	case tls.QUICEncryptionLevelHandshake:
		return spaceHandshake
	}
	return spaceApp
}

func (c *Conn) drainTLS() error {
	for {
		e := c.tls.NextEvent()
		switch e.Kind {
		case tls.QUICNoEvent:
			return nil
		case tls.QUICSetReadSecret, tls.QUICSetWriteSecret:
			k, err := quicwire.NewKeys(c.version, e.Suite, append([]byte(nil), e.Data...))
			if err != nil {
				return err
			}
			if e.Level == tls.QUICEncryptionLevelEarly {
				c.zeroRTT = k
				continue
			}
			s := c.spaces[levelSpace(e.Level)]
			if e.Kind == tls.QUICSetReadSecret {
				s.recv = k
				if e.Level == tls.QUICEncryptionLevelApplication {
					s.recvNext = k.Next()
				}
			} else {
				s.send = k
			}
			c.retryPending()
		case tls.QUICWriteData:
			s := c.spaces[levelSpace(e.Level)]
			s.cryptoOut = append(s.cryptoOut, e.Data...)
		case tls.QUICTransportParameters:
			ps, err := quicwire.ParseTransportParameters(e.Data)
			if err != nil {
				return fmt.Errorf("the peer's transport parameters: %w", err)
			}
			c.peerParams = ps
		case tls.QUICTransportParametersRequired:
			c.tls.SetTransportParameters(c.transportParams())
		case tls.QUICHandshakeDone:
			c.handshakeDone = true
			if !c.client {
				c.confirmed = true
				if err := c.flushCrypto(false); err != nil {
					return err
				}
				if err := c.send(spaceApp, quicwire.HandshakeDone{}); err != nil {
					return err
				}
			}
		}
	}
}

func (c *Conn) write(b []byte) error {
	var err error
	if c.peer != nil {
		_, err = c.pc.WriteToUDP(b, c.peer)
	} else {
		_, err = c.pc.Write(b)
	}
	if err != nil {
		return fmt.Errorf("quicpeer: send: %w", err)
	}
	return nil
}

// send sends frames in one packet of space sp.
func (c *Conn) send(sp int, frames ...quicwire.Frame) error {
	s := c.spaces[sp]
	if s.send == nil {
		return fmt.Errorf("quicpeer: no %s keys to send with yet", spaceType(sp))
	}
	payload := quicwire.AppendFrames(nil, frames...)
	h := c.header(spaceType(sp))
	if sp == spaceInitial {
		payload = c.padInitial(h, payload, s.send)
	}
	b := quicwire.AppendPacket(nil, h, s.pn, payload, s.send)
	s.pn++
	return c.write(b)
}

// padInitial pads an Initial's payload so that its datagram takes 1200
// bytes (RFC 9000 §14.1).
func (c *Conn) padInitial(h *quicwire.Header, payload []byte, k *quicwire.Keys) []byte {
	probe := quicwire.AppendPacket(nil, h, 0, payload, k)
	if len(probe) < 1200 {
		payload = append(payload, make([]byte, 1200-len(probe))...)
	}
	return payload
}

func spaceType(sp int) quicwire.PacketType {
	return [...]quicwire.PacketType{quicwire.Initial, quicwire.Handshake, quicwire.OneRTT}[sp]
}

func (c *Conn) header(t quicwire.PacketType) *quicwire.Header {
	h := &quicwire.Header{Type: t, Version: c.version, DstConnID: c.dcid, SrcConnID: c.scid, PNLen: 4, KeyPhase: c.keyPhase}
	if t == quicwire.Initial && c.client {
		h.Token = c.token
	}
	return h
}

// PeerClosedError is the error of a handshake that the peer ended with a
// CONNECTION_CLOSE.
type PeerClosedError struct{ Close quicwire.ConnectionClose }

func (e *PeerClosedError) Error() string {
	return "handshake: the peer closed the connection: " + describeClose(&e.Close)
}

// Is makes the error match ErrClosed.
func (e *PeerClosedError) Is(target error) bool { return target == ErrClosed }

func describeClose(cc *quicwire.ConnectionClose) string {
	if cc.App {
		return fmt.Sprintf("application error 0x%x %q", cc.ErrorCode, cc.Reason)
	}
	return fmt.Sprintf("%s (frame %s) %q", quicwire.TransportError(cc.ErrorCode), quicwire.FrameName(cc.Offending), cc.Reason)
}
