package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/http2"

	"kquic.dev/ktls"
)

// handshakeTimeout bounds a kTLS server handshake, so that a silent peer
// does not hold a goroutine.
const handshakeTimeout = 10 * time.Second

// ktlsServer serves HTTP/2 on kernel TLS connections.
type ktlsServer struct {
	ln   net.Listener
	h2   *http2.Server
	opts *http2.ServeConnOpts
	cfg  *ktls.Config

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
	errs   Errors // failed handshakes
}

// ServeH2KTLS serves h over HTTP/2 on ln with kernel TLS: each accepted
// TCP connection's handshake runs in crypto/tls (package ktls), its records
// then go to the kernel, and golang.org/x/net/http2 serves the connection.
// The Server owns ln. A failed handshake fails that connection only; Close
// reports how many failed.
func ServeH2KTLS(ln net.Listener, h http.Handler, tlsConf *tls.Config, cfg Config) (Server, error) {
	if err := cfg.check("h2"); err != nil {
		return nil, err
	}
	tc, err := serverTLS(tlsConf, "h2")
	if err != nil {
		return nil, err
	}
	settings, h2c := h2Settings(cfg, "ktls", true)
	base := &http.Server{Handler: h, HTTP2: h2c}
	s := &ktlsServer{
		ln: ln,
		h2: &http2.Server{
			MaxConcurrentStreams:         uint32(settings.MaxStreams),
			MaxUploadBufferPerStream:     int32(settings.StreamWindow),
			MaxUploadBufferPerConnection: int32(settings.ConnWindow),
		},
		opts:  &http2.ServeConnOpts{Handler: h, BaseConfig: base},
		cfg:   &ktls.Config{TLS: tc, ExpectNoPad: true},
		conns: map[net.Conn]struct{}{},
	}
	return start(s.serve, s.close, ln.Addr(), settings), nil
}

func (s *ktlsServer) serve() error {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return err
		}
		if !s.track(c, true) {
			c.Close()
			return net.ErrClosed
		}
		s.wg.Add(1)
		go s.serveConn(c)
	}
}

func (s *ktlsServer) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer s.track(c, false)
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	kc, err := ktls.Server(ctx, c, s.cfg)
	cancel()
	if err != nil {
		s.mu.Lock()
		if !s.closed { // not one Close cut short
			s.errs.Add("handshake", err)
		}
		s.mu.Unlock()
		return
	}
	s.track(c, false)
	if !s.track(kc, true) {
		kc.Close()
		return
	}
	defer s.track(kc, false)
	defer kc.Close()
	s.h2.ServeConn(kc, s.opts)
}

// track adds or removes a live connection; adding fails once closed.
func (s *ktlsServer) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.conns, c)
		return true
	}
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *ktlsServer) close() error {
	s.mu.Lock()
	s.closed = true
	err := s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if s.errs.Count > 0 {
		err = errors.Join(err, fmt.Errorf("web: kTLS server: %d handshakes failed: %s", s.errs.Count, s.errs))
	}
	return err
}

// H2KTLSClient is the client of ServeH2KTLS: golang.org/x/net/http2's
// Transport over kernel TLS connections from ktls.Client. Sessions are not
// resumed: ktls drops the TLS 1.3 tickets that arrive after the switch.
func H2KTLSClient(url string, tlsConf *tls.Config, cfg Config) (*Client, error) {
	if err := cfg.check("h2"); err != nil {
		return nil, err
	}
	settings, h2c := h2Settings(cfg, "ktls", false)
	return &Client{
		Name: "h2/ktls", URL: url, Settings: settings,
		NoResumption: "ktls.Client drops the TLS 1.3 session tickets that arrive after the switch to kernel TLS",
		NoEarlyData:  "crypto/tls has no TLS 1.3 early data (0-RTT) on the client",
		New: func(tls.ClientSessionCache) (http.RoundTripper, error) {
			hc := *h2c
			t1 := &http.Transport{HTTP2: &hc}
			t2, err := http2.ConfigureTransports(t1) // for t1's windows; t1 itself is not used
			if err != nil {
				return nil, fmt.Errorf("web: HTTP/2 transport: %w", err)
			}
			t2.TLSClientConfig = clientTLS(tlsConf, "h2", nil)
			t2.StrictMaxConcurrentStreams = true
			t2.DisableCompression = true
			p := &onePool{t: t2, dial: func(ctx context.Context, addr string) (net.Conn, error) {
				return dialKTLS(ctx, cfg.DialTCP, "tcp", addr, t2.TLSClientConfig)
			}}
			t2.ConnPool = p
			return &h2RT{Transport: t2, pool: p}, nil
		},
	}, nil
}

// onePool is an HTTP/2 connection pool of one connection, dialed at the
// first request and again only once it is closed.
type onePool struct {
	t    *http2.Transport
	dial func(ctx context.Context, addr string) (net.Conn, error)
	mu   sync.Mutex
	cc   *http2.ClientConn
}

func (p *onePool) GetClientConn(req *http.Request, addr string) (*http2.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cc != nil && !p.cc.State().Closed && !p.cc.State().Closing {
		return p.cc, nil
	}
	c, err := p.dial(req.Context(), addr)
	if err != nil {
		return nil, err
	}
	cc, err := p.t.NewClientConn(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("web: HTTP/2 connection to %s: %w", addr, err)
	}
	p.cc = cc
	return cc, nil
}

func (p *onePool) MarkDead(cc *http2.ClientConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cc == cc {
		p.cc = nil
	}
}

func (p *onePool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cc == nil {
		return nil
	}
	err := p.cc.Close()
	p.cc = nil
	return err
}

// h2RT is an HTTP/2 Transport on a onePool, closing its connection with it.
type h2RT struct {
	*http2.Transport
	pool *onePool
}

// Close closes the connection.
func (rt *h2RT) Close() error { return rt.pool.close() }

func dialKTLS(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), network, addr string, conf *tls.Config) (net.Conn, error) {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	nc, err := dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	kc, err := ktls.Client(ctx, nc, &ktls.Config{TLS: conf, ExpectNoPad: true})
	if err != nil {
		return nil, err
	}
	if p := kc.ConnectionState().NegotiatedProtocol; p != "h2" {
		kc.Close()
		return nil, fmt.Errorf("web: the server at %s negotiated ALPN %q, not h2", addr, p)
	}
	return kc, nil
}
