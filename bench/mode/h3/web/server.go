package web

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
)

// Server is a running server of a handler over one transport.
type Server interface {
	// Addr is the address it listens on.
	Addr() net.Addr
	// URL is the base URL of its resources ("https://host:port").
	URL() string
	// Settings are its HTTP-layer settings in force.
	Settings() Settings
	// Close stops it: listener and connections. It returns the error that
	// stopped it early, if one did.
	Close() error
}

// HTTP3Server is an HTTP/3 server bound to its listener, the shape
// NewHTTP3 takes: quic-go's http3.Server with its listener fits
// (ServeH3QuicGo is built on it), and so does this project's HTTP/3 over
// quicnet (kernel QUIC or quic-go).
type HTTP3Server interface {
	// Serve serves until Close; it then returns nil or
	// http.ErrServerClosed.
	Serve() error
	// Close stops Serve and closes the server's connections.
	Close() error
}

// NewHTTP3 runs srv, listening on addr, as a Server reporting settings.
func NewHTTP3(srv HTTP3Server, addr net.Addr, settings Settings) Server {
	return start(srv.Serve, srv.Close, addr, settings)
}

// served is a Server running serve in a goroutine until stop.
type served struct {
	addr     net.Addr
	settings Settings
	stop     func() error
	done     chan struct{}
	err      error // serve's, set before done closes
	once     sync.Once
	closeErr error
}

func start(serve, stop func() error, addr net.Addr, settings Settings) *served {
	s := &served{addr: addr, settings: settings, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = serve()
	}()
	return s
}

func (s *served) Addr() net.Addr     { return s.addr }
func (s *served) URL() string        { return "https://" + s.addr.String() }
func (s *served) Settings() Settings { return s.settings }

func (s *served) Close() error {
	s.once.Do(func() {
		err := s.stop()
		<-s.done
		if s.err != nil && !errors.Is(s.err, http.ErrServerClosed) && !errors.Is(s.err, net.ErrClosed) {
			err = errors.Join(fmt.Errorf("web: %s server over %s stopped: %w", s.settings.Protocol, s.settings.Stack, s.err), err)
		}
		s.closeErr = err
	})
	return s.closeErr
}

// serverTLS is the server's tls.Config with only alpn offered.
func serverTLS(conf *tls.Config, alpn string) (*tls.Config, error) {
	if conf == nil || (len(conf.Certificates) == 0 && conf.GetCertificate == nil && conf.GetConfigForClient == nil) {
		return nil, errors.New("web: the server's tls.Config has no certificate; give it one (Certificates or GetCertificate)")
	}
	c := conf.Clone()
	c.NextProtos = []string{alpn}
	if c.MinVersion < tls.VersionTLS12 {
		c.MinVersion = tls.VersionTLS12
	}
	return c, nil
}

// clientTLS is the client's tls.Config offering alpn and resuming from
// cache (none when nil).
func clientTLS(conf *tls.Config, alpn string, cache tls.ClientSessionCache) *tls.Config {
	var c *tls.Config
	if conf == nil {
		c = &tls.Config{}
	} else {
		c = conf.Clone()
	}
	c.NextProtos = []string{alpn}
	c.ClientSessionCache = cache
	return c
}

// withNote returns notes with more appended, not aliasing notes.
func withNote(notes []string, more ...string) []string {
	return append(slices.Clip(notes), more...)
}
