package web

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
)

// h2Settings resolves cfg for an HTTP/2 end of net/http or x/net/http2:
// their defaults (1 MiB per stream and connection and 250 streams on a
// server; 4 MiB per stream and 1 GiB per connection on a client), set
// explicitly so that what is reported is what is in force.
func h2Settings(cfg Config, stack string, server bool) (Settings, *http.HTTP2Config) {
	s := Settings{Protocol: "h2", Stack: stack}
	if server {
		s.StreamWindow = orDefault(cfg.StreamWindow, 1<<20)
		s.ConnWindow = orDefault(cfg.ConnWindow, 1<<20)
		s.MaxStreams = orDefault(cfg.MaxStreams, 250)
	} else {
		s.StreamWindow = orDefault(cfg.StreamWindow, 4<<20)
		s.ConnWindow = orDefault(cfg.ConnWindow, 1<<30)
	}
	h2 := &http.HTTP2Config{
		MaxConcurrentStreams:          int(s.MaxStreams),
		StrictMaxConcurrentRequests:   true, // one connection per RoundTripper
		MaxReceiveBufferPerStream:     int(s.StreamWindow),
		MaxReceiveBufferPerConnection: int(s.ConnWindow),
	}
	how := "asked"
	if cfg.StreamWindow == 0 {
		how = "the Go HTTP/2 default"
	}
	s.Notes = []string{fmt.Sprintf("stream window %d bytes (%s), static (HTTP/2 does not autotune)", s.StreamWindow, how)}
	if !server {
		// The client's connection window is the initial 65535 plus its
		// first WINDOW_UPDATE of the configured size.
		s.ConnWindow += h2InitialWindow
	}
	return s, h2
}

// ServeH2TLS serves h over HTTP/2 on ln with crypto/tls: net/http as
// shipped, HTTP/2 only (ALPN h2). The Server owns ln.
func ServeH2TLS(ln net.Listener, h http.Handler, tlsConf *tls.Config, cfg Config) (Server, error) {
	if err := cfg.check("h2"); err != nil {
		return nil, err
	}
	tc, err := serverTLS(tlsConf, "h2")
	if err != nil {
		return nil, err
	}
	settings, h2 := h2Settings(cfg, "crypto/tls", true)
	var protos http.Protocols
	protos.SetHTTP2(true)
	srv := &http.Server{Handler: h, TLSConfig: tc, Protocols: &protos, HTTP2: h2}
	return start(func() error { return srv.ServeTLS(ln, "", "") }, srv.Close, ln.Addr(), settings), nil
}

// H2TLSClient is the client of ServeH2TLS: net/http's Transport, HTTP/2
// only, over crypto/tls; sessions resume by TLS 1.3 tickets (no 0-RTT:
// crypto/tls has no client early data).
func H2TLSClient(url string, tlsConf *tls.Config, cfg Config) (*Client, error) {
	if err := cfg.check("h2"); err != nil {
		return nil, err
	}
	settings, h2 := h2Settings(cfg, "crypto/tls", false)
	var protos http.Protocols
	protos.SetHTTP2(true)
	return &Client{
		Name: "h2/crypto/tls", URL: url, Settings: settings,
		NoEarlyData: "crypto/tls has no TLS 1.3 early data (0-RTT) on the client",
		New: func(cache tls.ClientSessionCache) (http.RoundTripper, error) {
			hc := *h2
			return &http.Transport{
				TLSClientConfig:    clientTLS(tlsConf, "h2", cache),
				Protocols:          &protos,
				HTTP2:              &hc,
				ForceAttemptHTTP2:  true,
				DisableCompression: true,
				MaxConnsPerHost:    1,
				DialContext:        cfg.DialTCP,
			}, nil
		},
	}, nil
}
