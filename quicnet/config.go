package quicnet

import "time"

// Config holds the connection settings both implementations have. A nil
// *Config and zero fields mean each implementation's default; the defaults
// are the same on both unless a field says otherwise.
type Config struct {
	// Implementation chooses the QUIC implementation: Auto (the zero
	// value: kernel QUIC where the kernel opens an IPPROTO_QUIC socket,
	// else quic-go, unless $QUICNET_IMPLEMENTATION says which; see
	// [Implementation]), Kernel or QuicGo. Listen and Dial choose once,
	// and the listener and the connection report it (Implementation
	// methods); Auto's choice is logged once per process (slog, Info). An
	// implementation that is not built in ([Implementations]) is an
	// error; Kernel without the module fails as Listen and Dial on it do,
	// with an error matching errors.ErrUnsupported.
	Implementation Impl

	// HandshakeTimeout bounds the whole handshake, for Dial and for the
	// connections a Listener accepts (default 10s); Dial then fails with a
	// *HandshakeTimeoutError. quic-go gets half of it as its
	// HandshakeIdleTimeout: it gives up after twice that, or after that
	// long without a packet from the peer (so a silent server fails a
	// quic-go Dial in HandshakeTimeout/2). kquic gets it as its
	// HandshakeTimeout.
	HandshakeTimeout time.Duration

	// MaxIdleTimeout closes a connection that received nothing for this
	// long (the smaller of the two sides' values applies; default 30s).
	// Kernel QUIC takes 1s and over.
	MaxIdleTimeout time.Duration

	// KeepAlivePeriod, if set, makes this side send a PING at this
	// interval, so that an idle connection stays open (default: none).
	// quic-go sends one at most every MaxIdleTimeout/2 whatever the value;
	// kernel QUIC takes 1.5s and over and uses the value as given.
	KeepAlivePeriod time.Duration

	// EnableDatagrams turns on unreliable datagrams (RFC 9221). Both sides
	// need it for SendDatagram to work.
	EnableDatagrams bool

	// MaxIncomingStreams is how many bidirectional streams the peer may
	// have open at once (default 100). quic-go takes a negative value to
	// allow none; kernel QUIC cannot refuse streams and takes 1..4096.
	MaxIncomingStreams int64

	// MaxIncomingUniStreams is the same for unidirectional streams.
	MaxIncomingUniStreams int64

	// Allow0RTT makes a listener's session tickets allow 0-RTT, and the
	// listener take the 0-RTT data of a client that resumes with one
	// ([DialEarly]). [Listener.Accept] still returns a connection once its
	// handshake has completed, so its 0-RTT data is read after that: an
	// attacker who replays a ClientHello with its 0-RTT data (RFC 9001
	// §9.2) cannot complete the handshake, and its data is never read. An
	// [EarlyListener] hands the connection out before, to answer the
	// 0-RTT data in the server's first flight; the server must then act
	// only on what is safe to replay until [Conn.HandshakeComplete]. Dial
	// ignores it.
	Allow0RTT bool

	// StreamReceiveWindow is the flow-control window this side grants each
	// stream, in bytes (0: the implementation's default, quic-go's 512 KiB
	// autotuned up to 6 MiB, kernel QUIC's 1048560). Set, it is fixed:
	// quic-go does not grow it. Kernel QUIC takes 1200..268435455.
	StreamReceiveWindow uint64

	// ConnectionReceiveWindow is the same for the whole connection (0:
	// quic-go's 768 KiB autotuned up to 15 MiB, kernel QUIC's 2097120).
	// Kernel QUIC takes 1200..536870911.
	ConnectionReceiveWindow uint64
}

// defaultHandshakeTimeout is Config.HandshakeTimeout's default on both sides.
const defaultHandshakeTimeout = 10 * time.Second

func (c *Config) handshakeTimeout() time.Duration {
	if c == nil || c.HandshakeTimeout <= 0 {
		return defaultHandshakeTimeout
	}
	return c.HandshakeTimeout
}

// orZero returns c, or a zero Config for nil.
func (c *Config) orZero() *Config {
	if c == nil {
		return &Config{}
	}
	return c
}
