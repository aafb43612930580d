package kquic

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"kquic.dev/internal/quicabi"
)

// Version is a QUIC version.
type Version uint32

// The versions the kernel speaks.
const (
	Version1 Version = quicabi.QUIC_VERSION_V1 // RFC 9000
	Version2 Version = quicabi.QUIC_VERSION_V2 // RFC 9369
)

// CongestionControl selects the kernel's congestion controller.
type CongestionControl uint8

// The kernel's congestion controllers.
const (
	Reno  CongestionControl = CongestionControl(quicabi.QUIC_CONG_ALG_RENO) // the kernel's default
	Cubic CongestionControl = CongestionControl(quicabi.QUIC_CONG_ALG_CUBIC)
)

// Config configures connections. The zero value of every field means the
// kernel's default; a value the kernel would not take is an error, never
// silently ignored.
type Config struct {
	// TLS configures the handshake: certificates, ServerName, NextProtos
	// (ALPN), RootCAs, ClientSessionCache, KeyLogWriter. Required.
	TLS *tls.Config
	// Transport holds the local transport parameters.
	Transport TransportParameters
	// Version is the QUIC version a client starts with (default Version1).
	// Any other value forces version negotiation.
	Version Version
	// CongestionControl is Reno (the default) or Cubic.
	CongestionControl CongestionControl
	// InitialRTT seeds the RTT estimate (1ms..6s; default 333ms).
	InitialRTT time.Duration
	// PLPMTUDProbeInterval turns on path MTU probing at that interval (5s..143s).
	PLPMTUDProbeInterval time.Duration
	// KeepAlive sends a PING at this interval (at least 1.5s; default off).
	KeepAlive time.Duration
	// StreamDataNoDelay turns off the kernel's Nagle-like coalescing of
	// stream data.
	StreamDataNoDelay bool
	// ValidatePeerAddress makes a listener answer with a Retry and require
	// a valid token before it accepts a connection.
	ValidatePeerAddress bool
	// Token is an address validation token from an earlier connection to
	// the same server ([Conn.Token]); a client sends it in its Initials.
	Token []byte
	// PreferredAddress is the address a server asks its clients to move to
	// after the handshake (RFC 9000 §9.6).
	PreferredAddress netip.AddrPort
	// InitialMaxUDPPayload caps a client's datagrams until the server's
	// transport parameters arrive (1200..65527; 0: no cap). Dial gives it
	// to the kernel as the server's max_udp_payload_size (RFC 9000 §18.2)
	// once the socket is connected, before the ClientHello: the first
	// flight, the Initial packets that carry the ClientHello, leaves in
	// datagrams of at most this many bytes of UDP payload, and the
	// server's own value replaces it when its transport parameters arrive
	// (a resumed session's remembered ones, for 0-RTT). Without it the
	// module sizes those datagrams by the route's MTU alone: on loopback
	// (MTU 65536) Go's ClientHello leaves as one 1624-byte datagram, which
	// a server that reads datagrams of at most 1452 bytes, as quic-go does,
	// never sees whole, so the dial times out. RFC 9000 §14 has an
	// endpoint that has not probed the path send no more than 1200 bytes,
	// which every QUIC server takes; quicnet sets that. A listener ignores
	// it (a server knows the client's limit before it sends).
	InitialMaxUDPPayload uint16
	// HandshakeTimeout bounds Dial's and Accept's handshakes (default 10s).
	HandshakeTimeout time.Duration
	// Events lists the events [Conn.ReceiveEvent] delivers.
	Events []EventType
	// ReusePort sets SO_REUSEPORT on a listener, so that several listeners
	// with the same ALPN list share a port.
	ReusePort bool
	// Backlog is the kernel's queue of a listener's new connections not yet
	// taken by its accept loop (default 128). When it is full the kernel
	// refuses further clients with CONNECTION_REFUSED.
	Backlog int
	// MaxHandshakes bounds a listener's handshakes in progress (default
	// DefaultMaxHandshakes); AcceptQueue bounds its connections whose
	// handshake completed and that Accept has not returned yet (default
	// DefaultAcceptQueue). While both are at their limit the listener takes
	// no new connection from the kernel, whose Backlog then fills and
	// refuses the excess with CONNECTION_REFUSED: a flood of ClientHellos
	// or a server that accepts slowly costs at most that many goroutines
	// and connections.
	MaxHandshakes, AcceptQueue int
	// DatagramQueue bounds the received datagrams a connection holds for
	// ReceiveDatagram (default DefaultDatagramQueue); past it, new ones are
	// dropped (datagrams are unreliable) and counted by
	// [Conn.DatagramsDropped].
	DatagramQueue int
	// EventQueue bounds the events a connection holds for ReceiveEvent
	// (default DefaultEventQueue): the peer makes most of them (a stream
	// opened or reset, a new limit, a key update), so past it new ones are
	// dropped and counted by [Conn.EventsDropped].
	EventQueue int
	// Logger receives what a server may want to log and cannot see
	// otherwise: failed handshakes (Info, with the peer's address) and
	// retried accept errors (Warn). Nil logs nothing.
	Logger *slog.Logger
	// DisableSessionTickets stops a server from sending session tickets.
	DisableSessionTickets bool
	// Allow0RTT makes a listener's session tickets allow 0-RTT, and the
	// listener accept 0-RTT data from clients resuming with them (see
	// [DialEarly]); without it the listener declines 0-RTT data, even with
	// a ticket that allows it. 0-RTT data can be replayed by an attacker (RFC 9001
	// §9.2): only allow it for requests that are safe to repeat.
	Allow0RTT bool
	// CompactClientHello makes a client offer only X25519 and P-256 key
	// shares (unless TLS.CurvePreferences is set), so that its ClientHello
	// fits in one Initial packet. A kernel QUIC server that dispatches by
	// ALPN among several listeners on one port needs this: the module reads
	// the ALPN from the first Initial packet only and routes a second one,
	// which Go's default post-quantum X25519MLKEM768 key share (1.2 KB)
	// makes, to an arbitrary listener, so such handshakes fail or time out.
	// The cost is the loss of post-quantum key exchange, and an extra round
	// trip (HelloRetryRequest) with servers that insist on ML-KEM. Leave it
	// off for servers with one listener per port.
	CompactClientHello bool
}

const defaultHandshakeTimeout = 10 * time.Second

// Defaults of a listener's bounds (see Config.MaxHandshakes).
const (
	DefaultMaxHandshakes = 64
	DefaultAcceptQueue   = 32
	DefaultDatagramQueue = 128
	DefaultEventQueue    = 256
)

func (c *Config) handshakeTimeout() time.Duration {
	if c.HandshakeTimeout > 0 {
		return c.HandshakeTimeout
	}
	return defaultHandshakeTimeout
}

// TransportParameters are the QUIC transport parameters (RFC 9000 §18.2) of
// one side. Zero means the kernel's default.
type TransportParameters struct {
	MaxIdleTimeout           time.Duration // ≥1s; default 30s
	MaxAckDelay              time.Duration // <16384ms; default 25ms
	MaxData                  uint64        // 1200..536870911; default 2097120
	MaxStreamDataBidiLocal   uint64        // 1200..268435455; default 1048560
	MaxStreamDataBidiRemote  uint64        // likewise
	MaxStreamDataUni         uint64        // likewise
	MaxStreamsBidi           uint16        // ≤4096; default 100
	MaxStreamsUni            uint16        // ≤4096; default 100
	MaxDatagramFrameSize     uint16        // ≥1200 turns on datagrams (RFC 9221); default off
	MaxUDPPayloadSize        uint16        // 1200..65527; default 65527
	AckDelayExponent         uint8         // 1..20; default 3 (0 cannot be set: the kernel reads it as "unchanged")
	ActiveConnectionIDLimit  uint8         // 2..8; default 7
	DisableActiveMigration   bool
	GreaseQUICBit            bool
	StatelessReset           bool // a server sends a stateless reset token
	Disable1RTTEncryption    bool // draft-banks-quic-disable-encryption; both ends must set it
	DisableCompatibleVersion bool // leave out version_information
}

// validate checks every set field against what the kernel accepts.
func (p *TransportParameters) validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(p.MaxIdleTimeout == 0 || p.MaxIdleTimeout >= time.Second && p.MaxIdleTimeout <= time.Duration(1<<32-1)*time.Microsecond,
		"MaxIdleTimeout %v: must be at least 1s (and under 71 minutes)", p.MaxIdleTimeout)
	check(p.MaxAckDelay == 0 || p.MaxAckDelay >= time.Microsecond && p.MaxAckDelay < 16384*time.Millisecond,
		"MaxAckDelay %v: must be under 16.384s", p.MaxAckDelay)
	check(p.MaxData == 0 || p.MaxData >= 1200 && p.MaxData <= 536870911, "MaxData %d: must be 1200..536870911", p.MaxData)
	for name, v := range map[string]uint64{"MaxStreamDataBidiLocal": p.MaxStreamDataBidiLocal, "MaxStreamDataBidiRemote": p.MaxStreamDataBidiRemote, "MaxStreamDataUni": p.MaxStreamDataUni} {
		check(v == 0 || v >= 1200 && v <= 268435455, "%s %d: must be 1200..268435455", name, v)
	}
	check(p.MaxStreamsBidi <= 4096, "MaxStreamsBidi %d: must be at most 4096", p.MaxStreamsBidi)
	check(p.MaxStreamsUni <= 4096, "MaxStreamsUni %d: must be at most 4096", p.MaxStreamsUni)
	check(p.MaxDatagramFrameSize == 0 || p.MaxDatagramFrameSize >= 1200, "MaxDatagramFrameSize %d: must be 0 (off) or at least 1200", p.MaxDatagramFrameSize)
	check(p.MaxUDPPayloadSize == 0 || p.MaxUDPPayloadSize >= 1200 && p.MaxUDPPayloadSize <= 65527, "MaxUDPPayloadSize %d: must be 1200..65527", p.MaxUDPPayloadSize)
	check(p.AckDelayExponent <= 20, "AckDelayExponent %d: must be at most 20", p.AckDelayExponent)
	check(p.ActiveConnectionIDLimit == 0 || p.ActiveConnectionIDLimit >= 2 && p.ActiveConnectionIDLimit <= 8, "ActiveConnectionIDLimit %d: must be 2..8", p.ActiveConnectionIDLimit)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kquic: transport parameters: %w", err)
	}
	return nil
}

// validate checks the config fields the kernel limits.
func (c *Config) validate() error {
	if c == nil || c.TLS == nil {
		return errors.New("kquic: Config.TLS is required (certificates, ServerName, NextProtos)")
	}
	if err := c.Transport.validate(); err != nil {
		return err
	}
	var errs []error
	if c.InitialRTT != 0 && (c.InitialRTT < time.Millisecond || c.InitialRTT > 6*time.Second) {
		errs = append(errs, fmt.Errorf("InitialRTT %v: must be 1ms..6s", c.InitialRTT))
	}
	if c.PLPMTUDProbeInterval != 0 && (c.PLPMTUDProbeInterval < 5*time.Second || c.PLPMTUDProbeInterval > 143165576*time.Microsecond) {
		errs = append(errs, fmt.Errorf("PLPMTUDProbeInterval %v: must be 5s..143s", c.PLPMTUDProbeInterval))
	}
	if c.InitialMaxUDPPayload != 0 && (c.InitialMaxUDPPayload < 1200 || c.InitialMaxUDPPayload > 65527) {
		errs = append(errs, fmt.Errorf("InitialMaxUDPPayload %d: must be 1200..65527 (or 0: no cap)", c.InitialMaxUDPPayload))
	}
	if c.KeepAlive != 0 && (c.KeepAlive < 1500*time.Millisecond || c.KeepAlive > time.Duration(1<<32-1)*time.Microsecond) {
		errs = append(errs, fmt.Errorf("KeepAlive %v: must be at least 1.5s", c.KeepAlive))
	}
	if c.MaxHandshakes < 0 || c.AcceptQueue < 0 || c.Backlog < 0 || c.DatagramQueue < 0 || c.EventQueue < 0 {
		errs = append(errs, fmt.Errorf("Backlog %d, MaxHandshakes %d, AcceptQueue %d, DatagramQueue %d, EventQueue %d: must not be negative", c.Backlog, c.MaxHandshakes, c.AcceptQueue, c.DatagramQueue, c.EventQueue))
	}
	if c.CongestionControl > Cubic {
		errs = append(errs, fmt.Errorf("CongestionControl %d: use Reno or Cubic", c.CongestionControl))
	}
	if len(c.Token) > 120 {
		errs = append(errs, fmt.Errorf("Token of %d bytes: the kernel takes at most 120", len(c.Token)))
	}
	for _, e := range c.Events {
		if e < EventStreamUpdate || e > EventNewSessionTicket {
			errs = append(errs, fmt.Errorf("Events: unknown event type %d", e))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kquic: config: %w", err)
	}
	return nil
}

// compactCurves are the key exchanges a client offers with
// Config.CompactClientHello: X25519's 32-byte key share keeps the
// ClientHello in one Initial packet.
var compactCurves = []tls.CurveID{tls.X25519, tls.CurveP256}

// clientTLS returns the tls.Config a client handshakes with.
func (c *Config) clientTLS() *tls.Config {
	if !c.CompactClientHello || len(c.TLS.CurvePreferences) > 0 {
		return c.TLS
	}
	t := c.TLS.Clone()
	t.CurvePreferences = compactCurves
	return t
}
