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
	"slices"
	"strconv"
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

type contextKey struct{ name string }

func (k *contextKey) String() string { return "kquic.dev/quicnet/http3 context value " + k.name }

// Server serves HTTP/3 over QUIC connections from a quicnet.Listener,
// with any http.Handler. Its zero value, with a TLSConfig, is a valid
// server; its fields must not change once it serves.
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

	// QUICConfig is the QUIC configuration of ListenAndServe's listener.
	// Its MaxIncomingStreams bounds the requests a connection has in
	// flight (default 100).
	QUICConfig *quicnet.Config

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

	mu        sync.Mutex
	listeners map[QUICListener]struct{}
	conns     map[*serverConn]struct{}
	closing   bool
	connsGone chan struct{} // closed when conns empties after closing
}

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown
// or Close: http.ErrServerClosed.
var ErrServerClosed = http.ErrServerClosed

// ListenAndServe listens on Addr (UDP) with TLSConfig and QUICConfig and
// serves the connections until Shutdown or Close.
func (s *Server) ListenAndServe() error {
	if s.TLSConfig == nil || (len(s.TLSConfig.Certificates) == 0 && s.TLSConfig.GetCertificate == nil && s.TLSConfig.GetConfigForClient == nil) {
		return errors.New("http3: ListenAndServe needs Server.TLSConfig with a certificate (or use ListenAndServeTLS)")
	}
	return s.listenAndServe(s.TLSConfig)
}

// ListenAndServeTLS is ListenAndServe with the certificate and key in
// these PEM files (added to TLSConfig's settings).
func (s *Server) ListenAndServeTLS(certFile, keyFile string) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("http3: load the certificate: %w", err)
	}
	var conf *tls.Config
	if s.TLSConfig != nil {
		conf = s.TLSConfig.Clone()
	} else {
		conf = &tls.Config{}
	}
	conf.Certificates = []tls.Certificate{cert}
	return s.listenAndServe(conf)
}

func (s *Server) listenAndServe(conf *tls.Config) error {
	if s.shuttingDown() {
		return ErrServerClosed
	}
	addr := s.Addr
	if addr == "" {
		addr = ":https"
	}
	ln, err := quicnet.ListenEarly("udp", addr, ConfigureTLSConfig(conf), s.QUICConfig)
	if err != nil {
		return err
	}
	return s.ServeListener(ln)
}

// ConfigureTLSConfig returns a copy of conf that offers "h3" by ALPN when
// it offers nothing, and at least TLS 1.3.
func ConfigureTLSConfig(conf *tls.Config) *tls.Config {
	c := conf.Clone()
	if len(c.NextProtos) == 0 {
		c.NextProtos = []string{NextProtoH3}
	}
	if c.MinVersion < tls.VersionTLS13 {
		c.MinVersion = tls.VersionTLS13
	}
	return c
}

// ListenAndServeTLS serves handler over HTTP/3 on the UDP address addr
// with the certificate and key in these PEM files.
func ListenAndServeTLS(addr, certFile, keyFile string, handler http.Handler) error {
	return (&Server{Addr: addr, Handler: handler}).ListenAndServeTLS(certFile, keyFile)
}

// Serve accepts connections from ln and serves each until Shutdown or
// Close, which also close ln. It returns ErrServerClosed after those, or
// the listener's error.
func (s *Server) Serve(ln *quicnet.Listener) error { return s.ServeListener(ln) }

// QUICListener is what ServeListener accepts connections from: a
// *quicnet.Listener, or a *quicnet.EarlyListener, whose connections are
// served before their handshake completes (see ServeConn).
type QUICListener interface {
	Accept(context.Context) (*quicnet.Conn, error)
	Addr() net.Addr
	io.Closer
}

// ServeListener is Serve on any QUICListener, as quic-go's. ListenAndServe
// serves a quicnet.EarlyListener: a client's 0-RTT requests are answered
// in the server's first flight where the implementation allows (quic-go).
func (s *Server) ServeListener(ln QUICListener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	if s.listeners == nil {
		s.listeners = map[QUICListener]struct{}{}
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()
	for {
		qc, err := ln.Accept(context.Background())
		if err != nil {
			if s.shuttingDown() {
				return ErrServerClosed
			}
			return err
		}
		go s.ServeConn(qc)
	}
}

// ServeConn serves HTTP/3 on one QUIC connection whose ALPN was "h3" and
// returns when the connection ends: nil when it closed with H3_NO_ERROR
// (after GOAWAY, idle, or the peer's close), else why it ended.
//
// On a connection whose handshake has not completed yet (from a
// quicnet.EarlyListener), requests that arrived in 0-RTT are served at
// once if their method is safe (RFC 9110 §9.2.1: GET, HEAD, OPTIONS,
// TRACE), which an attacker's replay of them cannot abuse (RFC 8470
// §2.1); the handler runs for any other only once the handshake has
// completed, when the client is known to have sent it. The request's TLS
// field says which: HandshakeComplete is false for a request served
// early.
func (s *Server) ServeConn(qc *quicnet.Conn) error {
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

// beginClose marks the server closing, closes its listeners and returns
// its connections and a channel closed when they have all ended.
func (s *Server) beginClose() ([]*serverConn, <-chan struct{}) {
	s.mu.Lock()
	s.closing = true
	for ln := range s.listeners {
		ln.Close()
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

// Shutdown stops the server gracefully: it closes the listeners and sends
// every connection a GOAWAY (requests already taken are served, later ones
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

// Close closes the listeners and every connection at once (H3_NO_ERROR),
// abandoning requests in flight.
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

// SetQUICHeaders adds the Alt-Svc field that announces this server's
// HTTP/3 port to h (for responses of an HTTP/1.1 or HTTP/2 server beside
// it): Port, else the port of a listener, else of Addr.
func (s *Server) SetQUICHeaders(h http.Header) error {
	port := s.Port
	if port == 0 {
		s.mu.Lock()
		for ln := range s.listeners {
			if ua, ok := ln.Addr().(*net.UDPAddr); ok {
				port = ua.Port
				break
			}
		}
		s.mu.Unlock()
	}
	if port == 0 && s.Addr != "" {
		_, p, err := net.SplitHostPort(s.Addr)
		if err == nil {
			port, err = net.LookupPort("udp", p)
		}
		if err != nil {
			return fmt.Errorf("http3: no port for Alt-Svc in Server.Addr %q: %w", s.Addr, err)
		}
	}
	if port == 0 {
		return errors.New("http3: no port for Alt-Svc: set Server.Port or Addr, or call Serve first")
	}
	h.Add("Alt-Svc", AltSvc(port, 0))
	return nil
}

// DefaultAltSvcMaxAge is how long AltSvc tells clients to remember the
// HTTP/3 endpoint when given 0: 30 days, as nginx's and quic-go's.
const DefaultAltSvcMaxAge = 30 * 24 * time.Hour

// AltSvc returns the Alt-Svc field value that announces HTTP/3 on port of
// the same host (RFC 7838): `h3=":443"; ma=2592000`. maxAge 0 is
// DefaultAltSvcMaxAge.
func AltSvc(port int, maxAge time.Duration) string {
	if maxAge <= 0 {
		maxAge = DefaultAltSvcMaxAge
	}
	return `h3=":` + strconv.Itoa(port) + `"; ma=` + strconv.FormatInt(int64(maxAge/time.Second), 10)
}

// AltSvcHandler wraps the handler of an HTTP/1.1 or HTTP/2 (TCP) server so
// that its responses announce HTTP/3 on port, as an nginx with
// `add_header Alt-Svc` does: browsers then move to HTTP/3.
func AltSvcHandler(h http.Handler, port int) http.Handler {
	v := []string{AltSvc(port, 0)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Alt-Svc"] = slices.Clone(v)
		h.ServeHTTP(w, r)
	})
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
