package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"

	"kquic.dev/quicnet"
)

// NextProtoH3 is the ALPN protocol of HTTP/3.
const NextProtoH3 = "h3"

// ServerContextKey is the context key under which a handler's request
// context holds the *Server, as net/http's.
var ServerContextKey = &contextKey{"http3-server"}

// ConnContextKey is the context key under which a handler's request
// context holds the *quicnet.Conn the request came on.
var ConnContextKey = &contextKey{"http3-conn"}

// RemoteAddrContextKey is the context key under which a handler's request
// context holds the client's address as a net.Addr (a *net.UDPAddr), as
// quic-go's: Request.RemoteAddr is its string.
var RemoteAddrContextKey = &contextKey{"remote-addr"}

// QUICListener is what ServeListener serves: a *quicnet.Listener, or
// anything with its methods, as quic-go's http3.QUICListener is for
// *quic.Conn. Accept must return once its context ends.
type QUICListener interface {
	Accept(context.Context) (*quicnet.Conn, error)
	Addr() net.Addr
	io.Closer
}

var _ QUICListener = (*quicnet.Listener)(nil)

type contextKey struct{ name string }

func (k *contextKey) String() string { return "kquic.dev/quicnet/http3 context value " + k.name }

// Server serves HTTP/3 over QUIC connections, with any http.Handler: on
// a UDP address of its own (ListenAndServe), on a socket the caller opened
// (Serve, over quic-go only), from a listener the caller opened
// (ServeListener), or one connection at a time (ServeQUICConn). Its zero
// value, with a TLSConfig, is a valid server; its fields must not change
// once it serves.
type Server struct {
	// Addr is the UDP address ListenAndServe listens on (":https" when
	// empty); its port also goes into Alt-Svc when Port is 0 and no
	// listener says its own.
	Addr string

	// Port is the UDP port advertised in Alt-Svc by SetQUICHeaders, when
	// clients reach the server on another port than it listens on.
	Port int

	// Handler serves the requests (http.DefaultServeMux when nil).
	Handler http.Handler

	// TLSConfig is the TLS configuration of ListenAndServe's listener;
	// NextProtos gets "h3" when it has none.
	TLSConfig *tls.Config

	// QUICConfig is the QUIC configuration of the listeners the server
	// opens (ListenAndServe, ListenAndServeTLS, Serve). Its
	// MaxIncomingStreams bounds the requests a connection has in flight
	// (default 100). When nil, the listeners allow 0-RTT (Allow0RTT), as
	// quic-go's http3 server does: a request that came in 0-RTT is still
	// handled once the handshake has completed, out of a replayer's reach
	// (see quicnet.Config.Allow0RTT).
	QUICConfig *quicnet.Config

	// EnableDatagrams sends SETTINGS_H3_DATAGRAM (RFC 9297), and turns on
	// QUIC datagrams (quicnet.Config.EnableDatagrams) on the listeners the
	// server opens; the connections ServeListener and ServeQUICConn get
	// must have them on already. Handlers send and receive HTTP datagrams
	// on the request's connection (ConnContextKey), each prefixed with the
	// request stream's ID divided by 4 as a QUIC varint (RFC 9297 §2.1):
	// this package has no per-stream datagram API.
	EnableDatagrams bool

	// AdditionalSettings are sent in the SETTINGS frame, beside the
	// server's own. The settings RFC 9114, RFC 9204, RFC 9220 and RFC
	// 9297 define are refused (serving fails with an error that names
	// the field to use). A client's settings are seen through the request
	// Body's or the ResponseWriter's Settingser.
	AdditionalSettings map[uint64]uint64

	// MaxHeaderBytes bounds a request's field section (names, values and
	// 32 bytes a field, RFC 9114 §4.2.2), and is sent to clients as
	// SETTINGS_MAX_FIELD_SECTION_SIZE; a larger request gets 431.
	// Default http.DefaultMaxHeaderBytes (1 MiB).
	MaxHeaderBytes int

	// ReadHeaderTimeout bounds the time from a request stream's opening
	// to its HEADERS frame: a client slower than that has the stream
	// reset with H3_REQUEST_INCOMPLETE. Zero: no limit.
	ReadHeaderTimeout time.Duration

	// WriteTimeout bounds writing a response, from the end of the
	// request's header: a client that stops reading has the stream
	// reset when it passes. Zero: no limit.
	WriteTimeout time.Duration

	// IdleTimeout closes a connection (H3_NO_ERROR) that has had no
	// request in flight for this long. Zero: no limit (the QUIC idle
	// timeout still ends a silent connection).
	IdleTimeout time.Duration

	// ConnContext, if set, derives the context of a connection's
	// requests from ctx (which holds ServerContextKey).
	ConnContext func(ctx context.Context, c *quicnet.Conn) context.Context

	// Logger logs handler panics and protocol errors (slog.Default when
	// nil).
	Logger *slog.Logger

	mu          sync.Mutex
	listeners   map[*serving]struct{}
	conns       map[*serverConn]struct{}
	closing     bool
	closeCtx    context.Context // ends when closing begins: Accept returns
	closeCancel context.CancelFunc
	connsGone   chan struct{} // closed when conns empties after closing
}

// serving is a listener the server accepts from; own says the server
// opened it, and closes it.
type serving struct {
	ln  QUICListener
	own bool
}

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown
// or Close: http.ErrServerClosed.
var ErrServerClosed = http.ErrServerClosed

// ServeListener accepts connections from ln and serves each until
// Shutdown or Close; it returns ErrServerClosed after those, or ln's
// error. ln's TLS configuration must offer "h3" (ConfigureTLSConfig adds
// it). As quic-go's, the server does not close ln: the caller does, once
// ServeListener has returned. A quicnet.EarlyListener's connections are
// served before their handshake completes (see ServeQUICConn), as
// ListenAndServe's are.
func (s *Server) ServeListener(ln QUICListener) error {
	if err := checkAdditionalSettings("Server.AdditionalSettings", s.AdditionalSettings); err != nil {
		return err
	}
	return s.serve(ln, false)
}

// Serve serves HTTP/3 on conn, a UDP socket the caller opened, with
// TLSConfig and QUICConfig, until Shutdown or Close; it returns
// ErrServerClosed after those. conn stays the caller's (closing the server
// leaves it open), as with quic-go's Serve.
//
// Only quic-go serves on a net.PacketConn (quicnet.ListenEarlyConn), so
// Serve runs over quic-go whatever quicnet's Auto would choose. Where
// kernel QUIC is asked for (QUICConfig.Implementation, or
// $QUICNET_IMPLEMENTATION) or is all the program has (-tags kquic), Serve
// fails with an error that matches quicnet.ErrPacketConn and
// errors.ErrUnsupported: kernel QUIC opens its own socket in the kernel,
// and ListenAndServe (Server.Addr) or quicnet.Listen with ServeListener
// serve over it.
func (s *Server) Serve(conn net.PacketConn) error {
	if !hasCertificate(s.TLSConfig) {
		return errors.New("http3: Serve needs Server.TLSConfig with a certificate")
	}
	if err := checkAdditionalSettings("Server.AdditionalSettings", s.AdditionalSettings); err != nil {
		return err
	}
	if s.shuttingDown() {
		return ErrServerClosed
	}
	ln, err := quicnet.ListenEarlyConn(conn, ConfigureTLSConfig(s.TLSConfig), s.quicConfig())
	if errors.Is(err, quicnet.ErrPacketConn) {
		return fmt.Errorf("http3: Server.Serve(net.PacketConn) serves over quic-go only, and kernel QUIC is asked for here (or is all this program has), which opens its own socket: serve with ListenAndServe and Server.Addr, or with quicnet.Listen and ServeListener: %w", err)
	}
	if err != nil {
		return fmt.Errorf("http3: Serve: %w", err)
	}
	return s.serve(ln, true)
}

// serve accepts connections from ln and serves them; own listeners are
// closed when it returns, and by Shutdown and Close.
func (s *Server) serve(ln QUICListener, own bool) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		if own {
			ln.Close()
		}
		return ErrServerClosed
	}
	if s.listeners == nil {
		s.listeners = map[*serving]struct{}{}
	}
	if s.closeCtx == nil {
		s.closeCtx, s.closeCancel = context.WithCancel(context.Background())
	}
	ctx := s.closeCtx
	e := &serving{ln: ln, own: own}
	s.listeners[e] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, e)
		s.mu.Unlock()
		if own {
			ln.Close()
		}
	}()
	for {
		qc, err := ln.Accept(ctx)
		if err != nil {
			if s.shuttingDown() {
				return ErrServerClosed
			}
			return err
		}
		go func() {
			if err := s.ServeQUICConn(qc); err != nil && !errors.Is(err, ErrServerClosed) {
				s.logger().Debug("http3: serving a connection ended", "remote", qc.RemoteAddr(), "error", err)
			}
		}()
	}
}

// ServeQUICConn serves HTTP/3 on one QUIC connection whose ALPN was "h3"
// and returns when the connection ends: nil when it closed with
// H3_NO_ERROR (after GOAWAY, idle, or the peer's close), else why it
// ended. Shutdown and Close end it too.
//
// On a connection whose handshake has not completed yet (from a
// quicnet.EarlyListener), requests that arrived in 0-RTT are served at
// once if their method is safe (RFC 9110 §9.2.1: GET, HEAD, OPTIONS,
// TRACE), which an attacker's replay of them cannot abuse (RFC 8470
// §2.1); the handler runs for any other only once the handshake has
// completed, when the client is known to have sent it. The request's TLS
// field says which: HandshakeComplete is false for a request served
// early.
func (s *Server) ServeQUICConn(qc *quicnet.Conn) error {
	sc, err := s.newServerConn(qc)
	if err != nil {
		return err
	}
	defer s.forget(sc)
	return sc.serve()
}

func (s *Server) shuttingDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

func (s *Server) forget(sc *serverConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, sc)
	if s.closing && len(s.conns) == 0 && s.connsGone != nil {
		close(s.connsGone)
		s.connsGone = nil
	}
}

// beginClose marks the server closing, stops accepting (closing the
// listeners it opened) and returns its connections and a channel closed
// when they have all ended.
func (s *Server) beginClose() ([]*serverConn, <-chan struct{}) {
	s.mu.Lock()
	s.closing = true
	if s.closeCancel != nil {
		s.closeCancel()
	}
	for e := range s.listeners {
		if e.own {
			e.ln.Close()
		}
	}
	conns := make([]*serverConn, 0, len(s.conns))
	for sc := range s.conns {
		conns = append(conns, sc)
	}
	gone := make(chan struct{})
	if len(s.conns) == 0 {
		close(gone)
	} else {
		if s.connsGone == nil {
			s.connsGone = make(chan struct{})
		}
		gone = s.connsGone
	}
	s.mu.Unlock()
	return conns, gone
}

// Shutdown stops the server gracefully: it stops accepting (closing the
// listeners it opened) and sends every connection a GOAWAY (requests already taken are served, later ones
// are refused with H3_REQUEST_REJECTED, which a client may retry
// elsewhere), then waits for the clients to close the connections once
// their last response is done, as RFC 9114 §5.2 has them do. If ctx ends
// first, the remaining connections are closed as by Close and ctx's error
// is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	conns, gone := s.beginClose()
	for _, sc := range conns {
		sc.goAway()
	}
	select {
	case <-gone:
		return nil
	case <-ctx.Done():
		s.Close()
		return ctx.Err()
	}
}

// Close stops accepting (closing the listeners it opened) and closes every
// connection at once (H3_NO_ERROR), abandoning requests in flight. It does
// not wait for the handlers to return.
func (s *Server) Close() error {
	conns, _ := s.beginClose()
	for _, sc := range conns {
		sc.close(ErrCodeNoError, "server closed")
	}
	return nil
}

func (s *Server) handler() http.Handler {
	if s.Handler != nil {
		return s.Handler
	}
	return http.DefaultServeMux
}

func (s *Server) maxHeaderBytes() uint64 {
	if s.MaxHeaderBytes > 0 {
		return uint64(s.MaxHeaderBytes)
	}
	return http.DefaultMaxHeaderBytes
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// handlerPanicked logs a handler's panic as net/http does, unless it is
// http.ErrAbortHandler.
func (s *Server) handlerPanicked(v any, req *http.Request) {
	if v == http.ErrAbortHandler {
		return
	}
	buf := make([]byte, 64<<10)
	buf = buf[:runtime.Stack(buf, false)]
	s.logger().Error("http3: panic serving request", "remote", req.RemoteAddr, "method", req.Method, "url", req.URL.String(), "panic", fmt.Sprint(v), "stack", string(buf))
}
