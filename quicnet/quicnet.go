package quicnet

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
)

// The exported types below hold an implementation (quicnet_quicgo.go or
// quicnet_kquic.go, chosen by Config.Implementation for each Listen and
// Dial) and convert its errors; their methods are the same on both.

// Listener accepts QUIC connections on one UDP address.
type Listener struct {
	impl listenerImpl
	kind Impl
}

// Listen listens for QUIC connections on addr ("host:port"; an empty host
// means every address). network is "udp", "udp4" or "udp6". tlsConf needs a
// certificate and, to be useful, NextProtos (the ALPN protocols served).
// conf may be nil. conf.Implementation chooses the implementation (Auto:
// see [Implementation]); [Listener.Implementation] says which it is.
func Listen(network, addr string, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	impl, kind, err := listen(network, addr, tlsConf, conf, false)
	if err != nil {
		return nil, err
	}
	return &Listener{impl: impl, kind: kind}, nil
}

func listen(network, addr string, tlsConf *tls.Config, conf *Config, early bool) (listenerImpl, Impl, error) {
	if tlsConf == nil {
		return nil, "", errors.New("quicnet: listen: a tls.Config with a certificate is required")
	}
	conf = conf.orZero()
	b, err := resolve(conf)
	if err != nil {
		return nil, "", err
	}
	impl, err := b.listen(network, addr, tlsConf, conf, early)
	if err != nil {
		return nil, "", err
	}
	return impl, b.impl, nil
}

// ListenAddr is Listen on network "udp", spelled as in quic-go.
func ListenAddr(addr string, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	return Listen("udp", addr, tlsConf, conf)
}

// Accept waits for a connection whose handshake has completed. Once the
// listener is closed it returns [ErrServerClosed].
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	return l.impl.accept(ctx)
}

// Close stops listening: pending and later Accepts return
// [ErrServerClosed], handshakes in progress are abandoned and connections
// not yet accepted are closed. Accepted connections stay open.
//
// With quic-go the UDP socket stays open (and the port taken) until the
// last accepted connection ends; a kernel QUIC listener's port is free
// again at once.
func (l *Listener) Close() error { return l.impl.close() }

// Addr returns the address the listener listens on (a *net.UDPAddr).
func (l *Listener) Addr() net.Addr { return l.impl.addr() }

// Implementation says which implementation the listener runs on: [Kernel]
// or [QuicGo].
func (l *Listener) Implementation() Impl { return l.kind }

// EarlyListener is a listener whose Accept hands out connections before
// their handshake completes, as quic-go's: a server can read a client's
// 0-RTT data and answer it (in 0.5-RTT packets) one round trip sooner
// than after [Listener.Accept]. [Conn.HandshakeComplete] says when the
// handshake is done.
//
// 0-RTT data can be replayed by an attacker (RFC 9001 §9.2): before the
// handshake completes, act only on requests that are safe to repeat, and
// wait for HandshakeComplete before anything else (quicnet/http3's server
// serves the safe methods at once and holds the others).
//
// On kernel QUIC, Accept returns connections once their handshake has
// completed, as [Listener.Accept]: the QUIC module (lxin/quic 03a9c7c)
// hands 0-RTT data to the socket only after the client's Finished (a known
// module bug, README), so there is nothing to read sooner, and the
// handshake runs in kquic before the connection is handed out.
type EarlyListener struct {
	impl listenerImpl
	kind Impl
}

// ListenEarly is [Listen] for an [EarlyListener], as quic-go's
// ListenEarly. Set conf.Allow0RTT for 0-RTT: without it the early
// connections' first data comes once the handshake has completed, as with
// Listen.
func ListenEarly(network, addr string, tlsConf *tls.Config, conf *Config) (*EarlyListener, error) {
	impl, kind, err := listen(network, addr, tlsConf, conf, true)
	if err != nil {
		return nil, err
	}
	return &EarlyListener{impl: impl, kind: kind}, nil
}

// ListenAddrEarly is ListenEarly on network "udp", spelled as in quic-go.
func ListenAddrEarly(addr string, tlsConf *tls.Config, conf *Config) (*EarlyListener, error) {
	return ListenEarly("udp", addr, tlsConf, conf)
}

// Accept waits for a connection whose handshake has started (quic-go) or
// completed (kernel QUIC). Once the listener is closed it returns
// [ErrServerClosed].
func (l *EarlyListener) Accept(ctx context.Context) (*Conn, error) {
	return l.impl.accept(ctx)
}

// Close stops listening, as [Listener.Close]. Accepted connections stay
// open, their handshakes too.
func (l *EarlyListener) Close() error { return l.impl.close() }

// Addr returns the address the listener listens on (a *net.UDPAddr).
func (l *EarlyListener) Addr() net.Addr { return l.impl.addr() }

// Implementation says which implementation the listener runs on.
func (l *EarlyListener) Implementation() Impl { return l.kind }

// Dial connects to addr ("host:port") and completes the handshake, bounded
// by ctx and Config.HandshakeTimeout. Without tlsConf.ServerName the host
// of addr is the server name. conf may be nil; conf.Implementation chooses
// the implementation (Auto: see [Implementation]), and
// [Conn.Implementation] says which it is.
func Dial(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	b, tlsConf, conf, err := prepareDial(addr, tlsConf, conf)
	if err != nil {
		return nil, err
	}
	return b.dial(ctx, addr, tlsConf, conf)
}

func prepareDial(addr string, tlsConf *tls.Config, conf *Config) (*backend, *tls.Config, *Config, error) {
	if tlsConf == nil {
		return nil, nil, nil, errors.New("quicnet: dial: a tls.Config is required")
	}
	if tlsConf.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, nil, nil, err
		}
		tlsConf = tlsConf.Clone()
		tlsConf.ServerName = host
	}
	conf = conf.orZero()
	b, err := resolve(conf)
	if err != nil {
		return nil, nil, nil, err
	}
	return b, tlsConf, conf, nil
}

// DialAddr is Dial, spelled as in quic-go.
func DialAddr(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	return Dial(ctx, addr, tlsConf, conf)
}

// DialEarly is [Dial] with 0-RTT (RFC 9001 §4.6): it opens the client's
// first bidirectional stream and writes data on it, in 0-RTT packets with
// the ClientHello when tlsConf.ClientSessionCache holds a session for the
// server from an earlier connection of this package's implementation,
// whose ticket allows early data (a listener with [Config.Allow0RTT]).
// Otherwise data is sent once the handshake has completed, as after Dial;
// if the server rejects the 0-RTT data, it is sent again in 1-RTT packets.
// DialEarly returns, like Dial, once the handshake has completed, with
// the stream open (write more, Close it for FIN, read the reply);
// [ConnectionState].Used0RTT then says whether the server took the data
// as 0-RTT.
//
// 0-RTT data can be replayed by an attacker (RFC 9001 §9.2): send only
// requests that are safe to repeat. With kernel QUIC only this first
// stream's data can leave as 0-RTT.
func DialEarly(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config, data []byte) (*Conn, *Stream, error) {
	b, tlsConf, conf, err := prepareDial(addr, tlsConf, conf)
	if err != nil {
		return nil, nil, err
	}
	c, s, err := b.dialEarly(ctx, addr, tlsConf, conf, data)
	if err != nil {
		return nil, nil, err
	}
	return c, &Stream{impl: s}, nil
}

// ConnectionState is what a connection negotiated.
type ConnectionState struct {
	// TLS is the handshake's state: NegotiatedProtocol (ALPN),
	// PeerCertificates, ServerName, Version, CipherSuite, DidResume.
	TLS tls.ConnectionState
	// SupportsDatagrams says whether datagrams are on: Local for this side
	// (Config.EnableDatagrams), Remote for the peer.
	SupportsDatagrams struct {
		Remote, Local bool
	}
	// Used0RTT says whether 0-RTT data was used: on a client (see
	// [DialEarly]), that it sent 0-RTT data and the server accepted it; on
	// a server ([Config.Allow0RTT]), that it accepted the client's 0-RTT
	// data.
	Used0RTT bool
}

// Conn is a QUIC connection: one whose handshake has completed, except
// those an [EarlyListener] hands out (see [Conn.HandshakeComplete]). Its
// methods are safe for concurrent use.
type Conn struct {
	impl connImpl
	kind Impl

	localDatagrams, remoteDatagrams bool

	ctxOnce sync.Once
	ctx     context.Context
}

// AcceptStream waits for the peer to open a bidirectional stream.
func (c *Conn) AcceptStream(ctx context.Context) (*Stream, error) {
	s, err := c.impl.acceptStream(ctx)
	if err != nil {
		return nil, convertError(err)
	}
	return &Stream{impl: s}, nil
}

// AcceptUniStream waits for the peer to open a unidirectional stream.
func (c *Conn) AcceptUniStream(ctx context.Context) (*ReceiveStream, error) {
	s, err := c.impl.acceptUniStream(ctx)
	if err != nil {
		return nil, convertError(err)
	}
	return &ReceiveStream{impl: s}, nil
}

// OpenStream opens a bidirectional stream, or returns a
// *[StreamLimitReachedError] if the peer allows no more now. The peer
// learns of the stream when data (or a FIN) is sent on it.
func (c *Conn) OpenStream() (*Stream, error) {
	s, err := c.impl.openStream()
	if err != nil {
		return nil, convertError(err)
	}
	return &Stream{impl: s}, nil
}

// OpenStreamSync opens a bidirectional stream, waiting until the peer
// allows one or ctx ends.
func (c *Conn) OpenStreamSync(ctx context.Context) (*Stream, error) {
	s, err := c.impl.openStreamSync(ctx)
	if err != nil {
		return nil, convertError(err)
	}
	return &Stream{impl: s}, nil
}

// OpenUniStream opens a unidirectional stream (see OpenStream).
func (c *Conn) OpenUniStream() (*SendStream, error) {
	s, err := c.impl.openUniStream()
	if err != nil {
		return nil, convertError(err)
	}
	return &SendStream{impl: s}, nil
}

// OpenUniStreamSync opens a unidirectional stream, waiting until the peer
// allows one or ctx ends.
func (c *Conn) OpenUniStreamSync(ctx context.Context) (*SendStream, error) {
	s, err := c.impl.openUniStreamSync(ctx)
	if err != nil {
		return nil, convertError(err)
	}
	return &SendStream{impl: s}, nil
}

// SendDatagram sends b as an unreliable datagram (RFC 9221). It returns
// [ErrDatagramsDisabled] if the peer does not take datagrams, and a
// *[DatagramTooLargeError] if b does not fit in one packet.
func (c *Conn) SendDatagram(b []byte) error {
	if !c.remoteDatagrams {
		if err := c.closedError(); err != nil {
			return err
		}
		return ErrDatagramsDisabled
	}
	if err := c.impl.sendDatagram(b); err != nil {
		return convertError(err)
	}
	return nil
}

// ReceiveDatagram waits for a datagram from the peer. It returns
// [ErrDatagramsDisabled] at once if this side did not turn datagrams on.
func (c *Conn) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	if !c.localDatagrams {
		return nil, ErrDatagramsDisabled
	}
	b, err := c.impl.receiveDatagram(ctx)
	if err != nil {
		return nil, convertError(err)
	}
	return b, nil
}

// CloseWithError closes the connection, sending the peer code and reason;
// the peer's operations then fail with an *[ApplicationError] with Remote
// true, and this side's with Remote false. Closing a closed connection
// does nothing.
//
// Kernel QUIC carries codes of up to 32 bits (a larger code is an error and
// the connection stays open) and reasons of up to 63 bytes (a longer one is
// cut).
func (c *Conn) CloseWithError(code ApplicationErrorCode, reason string) error {
	return c.impl.closeWithError(code, reason)
}

// ConnectionState returns what the handshake negotiated.
func (c *Conn) ConnectionState() ConnectionState {
	var cs ConnectionState
	cs.TLS = c.impl.tlsState()
	cs.SupportsDatagrams.Local = c.localDatagrams
	cs.SupportsDatagrams.Remote = c.remoteDatagrams
	cs.Used0RTT = c.impl.used0RTT()
	return cs
}

// Implementation says which implementation the connection runs on:
// [Kernel] or [QuicGo].
func (c *Conn) Implementation() Impl { return c.kind }

// HandshakeComplete returns a channel that is closed once the handshake
// has completed: at once, except on a connection an [EarlyListener]
// accepted over quic-go. Until then the client's Finished has not
// arrived: its 0-RTT data may be a replay (RFC 9001 §9.2), and its
// certificate, if any, is not verified yet.
func (c *Conn) HandshakeComplete() <-chan struct{} { return c.impl.handshakeComplete() }

// LocalAddr returns the local address (a *net.UDPAddr).
func (c *Conn) LocalAddr() net.Addr { return c.impl.localAddr() }

// RemoteAddr returns the peer's address (a *net.UDPAddr).
func (c *Conn) RemoteAddr() net.Addr { return c.impl.remoteAddr() }

// Context returns a context that is canceled when the connection ends;
// context.Cause then says why, with the same error types as the methods
// (an *[ApplicationError], *[IdleTimeoutError], ...).
func (c *Conn) Context() context.Context {
	c.ctxOnce.Do(func() {
		ctx, cancel := context.WithCancelCause(context.Background())
		c.ctx = ctx
		c.impl.afterClose(func() { cancel(c.impl.closeError()) })
	})
	return c.ctx
}

// closedError returns why the connection ended, or nil while it is open.
func (c *Conn) closedError() error {
	select {
	case <-c.impl.done():
		return c.impl.closeError()
	default:
		return nil
	}
}
