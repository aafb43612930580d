//go:build !linux

package kquic

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"syscall"
	"time"
)

// This file is the package on platforms other than Linux: the same API, so
// that code written against it builds anywhere, with no kernel QUIC behind
// it. Dial, Listen and the other entry points return an error matching
// ErrNotSupported; no Conn, Stream or Listener can be had, so their methods
// only return ErrNotSupported or zero values. The types that carry values
// (Config, errors, events) work as on Linux.

// errNotLinux is the error of every entry point here.
var errNotLinux = fmt.Errorf("%w: kernel QUIC needs Linux, this is %s", ErrNotSupported, runtime.GOOS)

// Version is a QUIC version.
type Version uint32

// The versions the kernel speaks.
const (
	Version1 Version = 1          // RFC 9000
	Version2 Version = 0x6b3343cf // RFC 9369
)

// CongestionControl selects the kernel's congestion controller.
type CongestionControl uint8

// The kernel's congestion controllers.
const (
	Reno  CongestionControl = 0 // the kernel's default
	Cubic CongestionControl = 1
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
	// Logger receives what a server may want to log and cannot see
	// otherwise: failed handshakes (Info, with the peer's address) and
	// retried accept errors (Warn). Nil logs nothing.
	Logger *slog.Logger
	// DisableSessionTickets stops a server from sending session tickets.
	DisableSessionTickets bool
	// Allow0RTT makes a listener's session tickets allow 0-RTT, and the
	// listener accept 0-RTT data from clients resuming with them (see
	// [DialEarly]). 0-RTT data can be replayed by an attacker (RFC 9001
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

// Defaults of a listener's bounds (see Config.MaxHandshakes).
const (
	DefaultMaxHandshakes = 64
	DefaultAcceptQueue   = 32
	DefaultDatagramQueue = 128
)

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

// Conn is an established QUIC connection: a kernel QUIC socket whose
// handshake has completed. Its methods are safe for concurrent use.
type Conn struct{}

// ErrClosed is returned by operations on a connection or listener that was
// closed locally. It wraps net.ErrClosed. After [Conn.CloseWithError] the
// operations return a *CloseError with Remote false, which also matches
// ErrClosed with errors.Is. Every way a connection ends - our close, the
// peer's close ([*CloseError]), the idle timeout ([*IdleTimeoutError]), a
// failed handshake - matches net.ErrClosed.
var ErrClosed = fmt.Errorf("kquic: connection closed: %w", net.ErrClosed)

// ErrNotSupported is returned where kernel QUIC cannot be used: the kernel
// has no QUIC module loaded (the socket call's errno stays reachable with
// errors.Is), or the platform is not Linux, as here.
var ErrNotSupported = fmt.Errorf("kernel QUIC is not supported here: %w", errors.ErrUnsupported)

// ErrStreamLimit is returned by OpenStream when the peer's stream limit is
// reached; OpenStreamSync waits instead.
var ErrStreamLimit = errors.New("kquic: the peer's stream limit is reached (use OpenStreamSync to wait)")

// ErrDatagramsDisabled is returned by SendDatagram when the peer did not
// advertise max_datagram_frame_size.
var ErrDatagramsDisabled = errors.New("kquic: the peer does not accept datagrams (it set no max_datagram_frame_size)")

// CloseError is a connection that was closed with a CONNECTION_CLOSE: by the
// peer (Remote), or by us or our kernel.
//
// Application tells an application's close (a CONNECTION_CLOSE frame of type
// 0x1d, whose Code is the application's own, such as HTTP/3's H3_NO_ERROR
// 0x100) from a transport close (type 0x1c, whose Code is a transport error
// of RFC 9000 §20.1 or a TLS alert as 0x100+alert, and FrameType the frame
// that caused it). The kernel's close record keeps the frame type field of a
// transport close and 0 for an application's, so a transport close that
// names no frame (frame type 0, "unknown") reads as the application's; the
// code's value is never used to guess.
type CloseError struct {
	Remote      bool
	Application bool
	Code        uint64
	FrameType   uint8
	Reason      string
}

// IdleTimeoutError is a connection the kernel closed after its idle timeout.
type IdleTimeoutError struct{}

// StreamError is a stream the peer reset (RESET_STREAM, on Read) or asked us
// to stop sending on (STOP_SENDING, on Write), or that we cancelled.
type StreamError struct {
	StreamID int64
	Code     uint64
	Remote   bool
}

// DatagramTooLargeError is a datagram over the largest size the connection
// can send in one packet. Max is a size that fits a packet of the peer's
// max_datagram_frame_size (the kernel counts the packet's header and tag
// against that limit); a smaller path MTU can lower the real limit further.
type DatagramTooLargeError struct {
	Size, Max int
}

// EventType names a kind of event the kernel reports about a connection.
type EventType uint8

// The kernel's events. Ask for them with [Config.Events] and read them with
// [Conn.ReceiveEvent].
const (
	EventStreamUpdate     EventType = 1 // *StreamUpdateEvent
	EventStreamMaxData    EventType = 2 // *StreamMaxDataEvent
	EventMaxStreams       EventType = 3 // *MaxStreamsEvent
	EventConnectionID     EventType = 4 // *ConnectionIDEvent
	EventConnectionClose  EventType = 5 // *ConnectionCloseEvent
	EventMigration        EventType = 6 // *MigrationEvent
	EventKeyUpdate        EventType = 7 // *KeyUpdateEvent
	EventNewToken         EventType = 8 // *NewTokenEvent
	EventNewSessionTicket EventType = 9 // *NewSessionTicketEvent
)

// Event is one of the *...Event types below.
type Event interface{ Type() EventType }

// StreamState is a state of a stream's send or receive side (RFC 9000 §3).
type StreamState uint8

var streamStateNames = [...]string{
	"SEND_STATE_READY", "SEND_STATE_SEND", "SEND_STATE_SENT", "SEND_STATE_RECVD",
	"SEND_STATE_RESET_SENT", "SEND_STATE_RESET_RECVD",
	"RECV_STATE_RECV", "RECV_STATE_SIZE_KNOWN", "RECV_STATE_RECVD", "RECV_STATE_READ",
	"RECV_STATE_RESET_RECVD", "RECV_STATE_RESET_READ",
}

// String returns the kernel's name of s without the QUIC_STREAM_ prefix.
func (s StreamState) String() string {
	if int(s) < len(streamStateNames) {
		return streamStateNames[s]
	}
	return fmt.Sprintf("StreamState(%d)", uint8(s))
}

// StreamUpdateEvent reports a stream changing state: all data acknowledged
// or received, a reset sent or received. ErrorCode is set for resets,
// FinalSize for the final states.
type StreamUpdateEvent struct {
	StreamID  int64
	State     StreamState
	ErrorCode uint32
	FinalSize uint64
}

// StreamMaxDataEvent reports the peer raising a stream's flow control limit.
type StreamMaxDataEvent struct {
	StreamID int64
	MaxData  uint64
}

// MaxStreamsEvent reports the peer allowing more streams: MaxStreamID is
// the highest stream ID it now allows (type bits included).
type MaxStreamsEvent struct{ MaxStreamID uint64 }

// ConnectionIDEvent reports connection IDs retired: ours by the peer
// (Dest false) or the peer's by us (Dest true). Active is the number in use,
// PriorTo the lowest number still live.
type ConnectionIDEvent struct {
	Dest            bool
	Active, PriorTo uint32
}

// ConnectionCloseEvent reports the connection closing: the peer's
// CONNECTION_CLOSE, a local protocol error, an idle timeout (all zero) or a
// stateless reset.
type ConnectionCloseEvent struct {
	ErrorCode uint32
	FrameType uint8
	Reason    string
}

// MigrationEvent reports a validated new path: our own migration (Local)
// or the peer's.
type MigrationEvent struct{ Local bool }

// KeyUpdateEvent reports a key update the peer started; Phase is the new
// key phase.
type KeyUpdateEvent struct{ Phase uint8 }

// NewTokenEvent carries an address validation token from the server, for
// [Config.Token] of a later connection.
type NewTokenEvent struct{ Token []byte }

// NewSessionTicketEvent carries the server's NewSessionTicket message.
type NewSessionTicketEvent struct{ Ticket []byte }

// Listener accepts kernel QUIC connections. Handshakes run concurrently in
// the background, at most Config.MaxHandshakes at a time; Accept returns
// connections whose handshake completed, of which at most
// Config.AcceptQueue wait. Beyond those bounds the listener leaves new
// connections in the kernel's queue (Config.Backlog), and the kernel refuses
// the excess with CONNECTION_REFUSED.
type Listener struct{}

// Stream is a QUIC stream: an io.ReadWriteCloser whose Close sends FIN.
// A unidirectional stream can only be written (if this side opened it) or
// read (if the peer did). Read and Write may be called concurrently with each
// other, not each with itself.
type Stream struct{}

// LocalAddr returns the local address (a *net.UDPAddr).
//
// Not on Linux: it returns the zero value.
func (c *Conn) LocalAddr() net.Addr {
	return nil
}

// RemoteAddr returns the peer's address (a *net.UDPAddr); it changes when the
// peer migrates.
//
// Not on Linux: it returns the zero value.
func (c *Conn) RemoteAddr() net.Addr {
	return nil
}

// ConnectionState returns the TLS state of the handshake: version, cipher
// suite, ALPN, server name, peer certificates, whether it resumed.
//
// Not on Linux: it returns the zero value.
func (c *Conn) ConnectionState() tls.ConnectionState {
	return tls.ConnectionState{}
}

// Done is closed when the connection has ended; Err then says why.
//
// Not on Linux: it returns a closed channel (there is no connection).
func (c *Conn) Done() <-chan struct{} {
	return closedChan
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Err returns why the connection ended, or nil while it is open.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) Err() error {
	return ErrNotSupported
}

// SyscallConn gives access to the socket, for options this package does not
// cover.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) SyscallConn() (syscall.RawConn, error) {
	return nil, ErrNotSupported
}

// Close closes the connection with application error code 0.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) Close() error {
	return ErrNotSupported
}

// CloseWithError closes the connection, sending the peer a CONNECTION_CLOSE
// with the application error code and reason (at most 63 bytes) after the
// kernel has sent the data already written.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) CloseWithError(code uint32, reason string) error {
	return ErrNotSupported
}

// AcceptStream waits for the peer to open a bidirectional stream.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) AcceptStream(ctx context.Context) (*Stream, error) {
	return nil, ErrNotSupported
}

// AcceptUniStream waits for the peer to open a unidirectional stream.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) AcceptUniStream(ctx context.Context) (*Stream, error) {
	return nil, ErrNotSupported
}

// OpenStream opens a bidirectional stream, or fails with ErrStreamLimit if
// the peer allows no more now.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) OpenStream() (*Stream, error) {
	return nil, ErrNotSupported
}

// OpenUniStream opens a unidirectional stream (see OpenStream).
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) OpenUniStream() (*Stream, error) {
	return nil, ErrNotSupported
}

// OpenStreamSync opens a bidirectional stream, waiting for the peer to allow
// one if needed.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) OpenStreamSync(ctx context.Context) (*Stream, error) {
	return nil, ErrNotSupported
}

// OpenUniStreamSync opens a unidirectional stream, waiting if needed.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) OpenUniStreamSync(ctx context.Context) (*Stream, error) {
	return nil, ErrNotSupported
}

// SetEventEnabled starts (on) or stops delivering events of type t to
// [Conn.ReceiveEvent], as Config.Events does at the start.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) SetEventEnabled(t EventType, on bool) error {
	return ErrNotSupported
}

// SendDatagram sends an unreliable datagram (RFC 9221), waiting while the
// socket's buffer is full.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) SendDatagram(b []byte) error {
	return ErrNotSupported
}

// DatagramsDropped returns how many received datagrams were dropped because
// Config.DatagramQueue of them were waiting for ReceiveDatagram.
//
// Not on Linux: it returns the zero value.
func (c *Conn) DatagramsDropped() uint64 {
	return 0
}

// ReceiveDatagram waits for a datagram from the peer.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	return nil, ErrNotSupported
}

// ReceiveEvent waits for the next event of a type listed in Config.Events.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) ReceiveEvent(ctx context.Context) (Event, error) {
	return nil, ErrNotSupported
}

// UpdateKeys starts a key update (RFC 9001 §6): the kernel derives the next
// keys and flips the key phase.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) UpdateKeys() error {
	return ErrNotSupported
}

// Migrate moves the connection to a new local address (same family, specific
// address, new port).
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) Migrate(local netip.AddrPort) error {
	return ErrNotSupported
}

// ConnectionIDs reports the connection ID numbers of one side: ours (dest
// false) or the peer's (dest true).
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) ConnectionIDs(dest bool) (active, priorTo uint32, err error) {
	return 0, 0, ErrNotSupported
}

// RetireConnectionIDs retires every connection ID numbered below priorTo,
// and, if active is not zero, switches to that number (which must exist and
// be higher than the current one).
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) RetireConnectionIDs(dest bool, active, priorTo uint32) error {
	return ErrNotSupported
}

// Token returns the address validation token the server sent (NEW_TOKEN), for
// Config.Token of a later connection.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) Token() ([]byte, error) {
	return nil, ErrNotSupported
}

// SendNewToken makes a server send one more NEW_TOKEN frame.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) SendNewToken() error {
	return ErrNotSupported
}

// PeerTransportParameters returns the transport parameters the peer sent.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) PeerTransportParameters() (TransportParameters, error) {
	return TransportParameters{}, ErrNotSupported
}

// TransportParameters returns the connection's own transport parameters.
//
// Not on Linux: it returns ErrNotSupported.
func (c *Conn) TransportParameters() (TransportParameters, error) {
	return TransportParameters{}, ErrNotSupported
}

// Dial connects to address ("host:port") over kernel QUIC and runs the TLS
// handshake.
//
// Not on Linux: it returns an error matching ErrNotSupported.
func Dial(ctx context.Context, network, address string, cfg *Config) (*Conn, error) {
	return nil, &net.OpError{Op: "dial", Net: "quic", Err: errNotLinux}
}

// DialAddr is Dial with a resolved address.
//
// Not on Linux: it returns an error matching ErrNotSupported.
func DialAddr(ctx context.Context, addr netip.AddrPort, cfg *Config) (*Conn, error) {
	return nil, &net.OpError{Op: "dial", Net: "quic", Addr: net.UDPAddrFromAddrPort(addr), Err: errNotLinux}
}

// DialEarly is [Dial] with 0-RTT data (RFC 9001 §4.6): data goes on the
// client's first bidirectional stream (ID 0), and when possible it leaves in
// 0-RTT packets, with the ClientHello, before the handshake completes.
//
// Not on Linux: it returns an error matching ErrNotSupported.
func DialEarly(ctx context.Context, network, address string, cfg *Config, data []byte) (*Conn, *Stream, error) {
	return nil, nil, &net.OpError{Op: "dial", Net: "quic", Err: errNotLinux}
}

// DialAddrEarly is [DialEarly] with a resolved address.
//
// Not on Linux: it returns an error matching ErrNotSupported.
func DialAddrEarly(ctx context.Context, addr netip.AddrPort, cfg *Config, data []byte) (*Conn, *Stream, error) {
	return nil, nil, &net.OpError{Op: "dial", Net: "quic", Addr: net.UDPAddrFromAddrPort(addr), Err: errNotLinux}
}

// EarlyDataAccepted reports whether 0-RTT data was used on the connection:
// for a client (see [DialEarly]), that it sent 0-RTT data and the server
// accepted it; for a server ([Config.Allow0RTT]), that it accepted the
// client's 0-RTT data.
//
// Not on Linux: it returns the zero value.
func (c *Conn) EarlyDataAccepted() bool {
	return false
}

// Is makes every close match net.ErrClosed, and a close of our own
// ErrClosed.
func (e *CloseError) Is(target error) bool {
	return target == net.ErrClosed || !e.Remote && target == ErrClosed
}

// Error describes the close. (On Linux it also names the transport error.)
func (e *CloseError) Error() string {
	who := "us"
	if e.Remote {
		who = "the peer"
	}
	var s string
	if e.Application {
		s = fmt.Sprintf("kquic: connection closed by %s with application error code %#x", who, e.Code)
	} else {
		s = fmt.Sprintf("kquic: connection closed by %s with transport error %#x, frame %#x", who, e.Code, e.FrameType)
	}
	if e.Reason != "" {
		s += fmt.Sprintf(": %q", e.Reason)
	}
	return s
}

// Error describes the timeout.
func (*IdleTimeoutError) Error() string {
	return "kquic: connection closed: idle timeout (no packet from the peer within max_idle_timeout)"
}

// Timeout reports true: the error is a timeout (net.Error).
func (*IdleTimeoutError) Timeout() bool {
	return true
}

// Temporary reports false.
func (*IdleTimeoutError) Temporary() bool {
	return false
}

// Is makes the idle timeout match net.ErrClosed: the connection has ended.
func (*IdleTimeoutError) Is(target error) bool {
	return target == net.ErrClosed
}

// Error describes the reset.
func (e *StreamError) Error() string {
	who := "locally"
	if e.Remote {
		who = "by the peer"
	}
	return fmt.Sprintf("kquic: stream %d was reset %s with code %#x", e.StreamID, who, e.Code)
}

// Error gives the size and the limit.
func (e *DatagramTooLargeError) Error() string {
	if e.Max > 0 {
		return fmt.Sprintf("kquic: datagram of %d bytes is over the connection's limit of %d", e.Size, e.Max)
	}
	return fmt.Sprintf("kquic: datagram of %d bytes does not fit in one packet", e.Size)
}

var eventTypeNames = [...]string{
	"NONE", "STREAM_UPDATE", "STREAM_MAX_DATA", "STREAM_MAX_STREAM", "CONNECTION_ID",
	"CONNECTION_CLOSE", "CONNECTION_MIGRATION", "KEY_UPDATE", "NEW_TOKEN", "NEW_SESSION_TICKET",
}

// String returns the kernel's name of t without the QUIC_EVENT_ prefix.
func (t EventType) String() string {
	if int(t) < len(eventTypeNames) {
		return eventTypeNames[t]
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// Count is the number of streams of that type now allowed.
func (e *MaxStreamsEvent) Count() uint64 {
	return e.MaxStreamID>>2 + 1
}

// Uni reports whether the limit is for unidirectional streams.
func (e *MaxStreamsEvent) Uni() bool {
	return e.MaxStreamID&0x02 != 0 // the stream type bit of unidirectional streams
}

// Type implements Event.
func (*StreamUpdateEvent) Type() EventType {
	return EventStreamUpdate
}

// Type implements Event.
func (*StreamMaxDataEvent) Type() EventType {
	return EventStreamMaxData
}

// Type implements Event.
func (*MaxStreamsEvent) Type() EventType {
	return EventMaxStreams
}

// Type implements Event.
func (*ConnectionIDEvent) Type() EventType {
	return EventConnectionID
}

// Type implements Event.
func (*ConnectionCloseEvent) Type() EventType {
	return EventConnectionClose
}

// Type implements Event.
func (*MigrationEvent) Type() EventType {
	return EventMigration
}

// Type implements Event.
func (*KeyUpdateEvent) Type() EventType {
	return EventKeyUpdate
}

// Type implements Event.
func (*NewTokenEvent) Type() EventType {
	return EventNewToken
}

// Type implements Event.
func (*NewSessionTicketEvent) Type() EventType {
	return EventNewSessionTicket
}

// Listen listens on address ("host:port"; an empty host means all addresses).
//
// Not on Linux: it returns an error matching ErrNotSupported.
func Listen(network, address string, cfg *Config) (*Listener, error) {
	return nil, &net.OpError{Op: "listen", Net: "quic", Err: errNotLinux}
}

// Addr returns the listener's address (a *net.UDPAddr).
//
// Not on Linux: it returns the zero value.
func (l *Listener) Addr() net.Addr {
	return nil
}

// AddrPort returns the listener's address.
//
// Not on Linux: it returns the zero value.
func (l *Listener) AddrPort() netip.AddrPort {
	return netip.AddrPort{}
}

// Accept waits for a connection whose handshake has completed.
//
// Not on Linux: it returns ErrNotSupported.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	return nil, ErrNotSupported
}

// Close stops listening, aborts handshakes in progress and closes the
// connections not yet accepted.
//
// Not on Linux: it returns ErrNotSupported.
func (l *Listener) Close() error {
	return ErrNotSupported
}

// StreamID returns the stream's ID: its two low bits give its type (RFC 9000
// §2.1).
//
// Not on Linux: it returns the zero value.
func (s *Stream) StreamID() int64 {
	return 0
}

// Read reads stream data.
//
// Not on Linux: it returns ErrNotSupported.
func (s *Stream) Read(p []byte) (int, error) {
	return 0, ErrNotSupported
}

// Write writes stream data, waiting while the kernel's buffers or the peer's
// flow control hold it back.
//
// Not on Linux: it returns ErrNotSupported.
func (s *Stream) Write(p []byte) (int, error) {
	return 0, ErrNotSupported
}

// Close sends FIN: the peer reads io.EOF after the data written.
//
// Not on Linux: it returns ErrNotSupported.
func (s *Stream) Close() error {
	return ErrNotSupported
}

// CancelWrite abandons sending: the kernel sends RESET_STREAM with the code.
//
// Not on Linux: it returns ErrNotSupported.
func (s *Stream) CancelWrite(code uint32) error {
	return ErrNotSupported
}

// CancelRead asks the peer to stop sending (STOP_SENDING with the code) and
// discards what arrives.
//
// Not on Linux: it returns ErrNotSupported.
func (s *Stream) CancelRead(code uint32) error {
	return ErrNotSupported
}

// SetDeadline sets the read and write deadlines.
//
// Not on Linux: it returns ErrNotSupported.
func (s *Stream) SetDeadline(t time.Time) error {
	return ErrNotSupported
}

// SetReadDeadline makes a waiting or later Read fail with
// os.ErrDeadlineExceeded once t passes (zero: no deadline).
//
// Not on Linux: it returns ErrNotSupported.
func (s *Stream) SetReadDeadline(t time.Time) error {
	return ErrNotSupported
}

// SetWriteDeadline does the same for Write.
//
// Not on Linux: it returns ErrNotSupported.
func (s *Stream) SetWriteDeadline(t time.Time) error {
	return ErrNotSupported
}
