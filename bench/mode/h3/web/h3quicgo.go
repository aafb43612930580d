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

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// quicGoRcvBuf is what quic-go asks of its UDP sockets itself (7 MiB, with
// SO_RCVBUFFORCE as root).
const quicGoRcvBuf = 7 << 20

// quicGoConfig resolves cfg for quic-go: its defaults are autotuned windows
// (512 KiB per stream growing to 6 MiB, 768 KiB per connection growing to 15
// MiB) and 100 streams; an asked window is fixed (initial = maximum).
func quicGoConfig(cfg Config, server bool) (*quic.Config, Settings) {
	s := Settings{Protocol: "h3", Stack: "quic-go"}
	q := &quic.Config{MaxIdleTimeout: 30 * time.Second, Allow0RTT: server}
	if cfg.StreamWindow > 0 {
		q.InitialStreamReceiveWindow, q.MaxStreamReceiveWindow = uint64(cfg.StreamWindow), uint64(cfg.StreamWindow)
		s.StreamWindow = cfg.StreamWindow
		s.Notes = append(s.Notes, fmt.Sprintf("stream window %d bytes, asked, fixed", cfg.StreamWindow))
	} else {
		q.InitialStreamReceiveWindow, q.MaxStreamReceiveWindow = 512<<10, 6<<20
		s.StreamWindow, s.Autotuned, s.InitialStreamWindow = 6<<20, true, 512<<10
		s.Notes = append(s.Notes, "stream window quic-go's default: 512 KiB autotuned up to 6 MiB")
	}
	if cfg.ConnWindow > 0 {
		q.InitialConnectionReceiveWindow, q.MaxConnectionReceiveWindow = uint64(cfg.ConnWindow), uint64(cfg.ConnWindow)
		s.ConnWindow = cfg.ConnWindow
	} else {
		q.InitialConnectionReceiveWindow, q.MaxConnectionReceiveWindow = 768<<10, 15<<20
		s.ConnWindow, s.Autotuned = 15<<20, true
	}
	if server {
		s.MaxStreams = orDefault(cfg.MaxStreams, 100)
		q.MaxIncomingStreams = s.MaxStreams
	}
	s.UDPRcvBufAsked = cfg.UDPRcvBuf
	if cfg.UDPRcvBuf == 0 {
		s.UDPRcvBufAsked = quicGoRcvBuf
		s.Notes = append(s.Notes, "UDP receive buffer: what quic-go asks for itself (7 MiB)")
	}
	return q, s
}

// setRcvBuf asks for the UDP receive buffer cfg names, after quic-go asked
// for its own, and returns what the kernel granted.
func setRcvBuf(pc *net.UDPConn, cfg Config) (int, error) {
	if cfg.UDPRcvBuf > 0 {
		if err := pc.SetReadBuffer(cfg.UDPRcvBuf); err != nil {
			return 0, fmt.Errorf("web: SO_RCVBUF %d: %w", cfg.UDPRcvBuf, err)
		}
	}
	return rcvBuf(pc)
}

// quicGoServer is quic-go's http3.Server on its listener: an HTTP3Server.
type quicGoServer struct {
	srv *http3.Server
	ln  *quic.EarlyListener
	tr  *quic.Transport
}

func (s *quicGoServer) Serve() error { return s.srv.ServeListener(s.ln) }

func (s *quicGoServer) Close() error {
	err := s.srv.Close()
	s.ln.Close()
	return errors.Join(err, s.tr.Close(), closeUDP(s.tr.Conn))
}

// closeUDP closes a socket quic-go may have closed already.
func closeUDP(c net.PacketConn) error {
	if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// ServeH3QuicGo serves h over HTTP/3 on pc with quic-go's own http3 (the
// reference users pick), 0-RTT allowed. The Server owns pc.
func ServeH3QuicGo(pc *net.UDPConn, h http.Handler, tlsConf *tls.Config, cfg Config) (Server, error) {
	if err := cfg.check("h3"); err != nil {
		return nil, err
	}
	tc, err := serverTLS(tlsConf, http3.NextProtoH3)
	if err != nil {
		return nil, err
	}
	qc, settings := quicGoConfig(cfg, true)
	tr := &quic.Transport{Conn: pc}
	ln, err := tr.ListenEarly(http3.ConfigureTLSConfig(tc), qc)
	if err != nil {
		return nil, fmt.Errorf("web: quic-go listen on %s: %w", pc.LocalAddr(), err)
	}
	if settings.UDPRcvBufGranted, err = setRcvBuf(pc, cfg); err != nil {
		ln.Close()
		tr.Close()
		return nil, err
	}
	srv := &http3.Server{Handler: h, QUICConfig: qc}
	return NewHTTP3(&quicGoServer{srv: srv, ln: ln, tr: tr}, pc.LocalAddr(), settings), nil
}

// H3QuicGoClient is the client of an HTTP/3 server: quic-go's
// http3.Transport, each connection on its own UDP socket. Sessions resume
// and GETs go in 0-RTT with http3.MethodGet0RTT.
func H3QuicGoClient(url string, tlsConf *tls.Config, cfg Config) (*Client, error) {
	if err := cfg.check("h3"); err != nil {
		return nil, err
	}
	qc, settings := quicGoConfig(cfg, false)
	return &Client{
		Name: "h3/quic-go", URL: url, Settings: settings, EarlyMethod: http3.MethodGet0RTT,
		New: func(cache tls.ClientSessionCache) (http.RoundTripper, error) {
			rt := &quicGoRT{cfg: cfg}
			rt.Transport = &http3.Transport{
				TLSClientConfig:    clientTLS(tlsConf, http3.NextProtoH3, cache),
				QUICConfig:         qc,
				DisableCompression: true,
				Dial:               rt.dial,
			}
			return rt, nil
		},
	}, nil
}

// quicGoRT is an http3.Transport whose connections each have their own
// socket, which it closes with it.
type quicGoRT struct {
	*http3.Transport
	cfg Config

	mu      sync.Mutex
	trs     []*quic.Transport
	last    *quic.Conn
	granted int
}

func (rt *quicGoRT) dial(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	listen := rt.cfg.ListenUDP
	if listen == nil {
		listen = func() (*net.UDPConn, error) { return net.ListenUDP("udp", nil) }
	}
	pc, err := listen()
	if err != nil {
		return nil, err
	}
	tr := &quic.Transport{Conn: pc}
	rt.mu.Lock()
	rt.trs = append(rt.trs, tr)
	rt.mu.Unlock()
	conn, err := tr.DialEarly(ctx, ua, tc, qc)
	if err != nil {
		return nil, err
	}
	granted, err := setRcvBuf(pc, rt.cfg)
	if err != nil {
		conn.CloseWithError(0, "")
		return nil, err
	}
	rt.mu.Lock()
	rt.last, rt.granted = conn, granted
	rt.mu.Unlock()
	return conn, nil
}

// Used0RTT reports whether the last connection's 0-RTT data was accepted.
func (rt *quicGoRT) Used0RTT() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.last != nil && rt.last.ConnectionState().Used0RTT
}

// UDPRcvBufGranted is the last connection's socket's SO_RCVBUF.
func (rt *quicGoRT) UDPRcvBufGranted() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.granted
}

// Close closes the transport and its sockets.
func (rt *quicGoRT) Close() error {
	err := rt.Transport.Close()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, tr := range rt.trs {
		err = errors.Join(err, tr.Close(), closeUDP(tr.Conn))
	}
	rt.trs = nil
	return err
}
