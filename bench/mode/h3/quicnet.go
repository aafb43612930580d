//go:build linux

package h3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"kquic.dev/bench/mode/h3/web"
	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// Kernel QUIC's flow-control windows when the socket does not set them
// (the module's max_stream_data and max_data), and quic-go's (which
// quicnet leaves at their defaults): 512 KiB per stream autotuned up to 6
// MiB, 768 KiB per connection up to 15 MiB, 100 streams.
const (
	kquicStreamWindow  = 16 * 65535
	kquicConnWindow    = 32 * 65535
	quicGoStreamWindow = 6 << 20
	quicGoStreamStart  = 512 << 10
	quicGoConnWindow   = 15 << 20
	quicnetMaxStreams  = 100
)

// quicnetSettings are the settings of an end of quicnet/http3 over the
// QUIC implementation impl, with cfg's stream window if asked.
func quicnetSettings(impl quicnet.Impl, server bool, cfg Config) web.Settings {
	s := web.Settings{Protocol: "h3", Stack: "quicnet/" + impl.String()}
	switch {
	case cfg.Window > 0:
		s.StreamWindow = int64(cfg.Window)
		s.Notes = append(s.Notes, fmt.Sprintf("stream window %d bytes, asked (quicnet.Config.StreamReceiveWindow), fixed", cfg.Window))
	case impl == quicnet.Kernel:
		s.StreamWindow = kquicStreamWindow
		s.Notes = append(s.Notes, fmt.Sprintf("stream window %d bytes: the kernel QUIC module's default", s.StreamWindow))
	default:
		s.StreamWindow, s.Autotuned, s.InitialStreamWindow = quicGoStreamWindow, true, quicGoStreamStart
		s.Notes = append(s.Notes, "stream window quic-go's default, 512 KiB autotuned up to 6 MiB")
	}
	if impl == quicnet.Kernel {
		s.ConnWindow = kquicConnWindow
		s.Notes = append(s.Notes, fmt.Sprintf("connection window %d bytes: the kernel QUIC module's default", s.ConnWindow))
	} else {
		s.ConnWindow, s.Autotuned = quicGoConnWindow, true
	}
	if server {
		s.MaxStreams = quicnetMaxStreams
	}
	s.Notes = append(s.Notes, "UDP receive buffer: the implementation's own (quicnet does not expose the socket)")
	return s
}

// quicnetConfig is the quicnet.Config of an end over impl, with cfg's
// stream window.
func quicnetConfig(impl quicnet.Impl, server bool, cfg Config) *quicnet.Config {
	qc := &quicnet.Config{Implementation: impl, StreamReceiveWindow: uint64(cfg.Window)}
	if server {
		qc.MaxIncomingStreams, qc.Allow0RTT = quicnetMaxStreams, true
	}
	return qc
}

// quicnetServer is http3.Server on its quicnet listener: a
// web.HTTP3Server.
type quicnetServer struct {
	srv *http3.Server
	ln  *quicnet.EarlyListener
}

func (s *quicnetServer) Serve() error { return s.srv.ServeListener(s.ln) }

func (s *quicnetServer) Close() error {
	err := s.srv.Close()
	if cerr := s.ln.Close(); cerr != nil && !errors.Is(cerr, quicnet.ErrServerClosed) {
		err = errors.Join(err, cerr)
	}
	return err
}

// listenQuicnet serves the handler with this project's HTTP/3 over
// quicnet on impl (the h3-kquic and h3-quicnet rows), from an early
// listener as quic-go's http3 server does: over quic-go a 0-RTT GET is
// answered in the server's first flight, one round trip after the
// ClientHello; kernel QUIC hands it over once the handshake has completed
// (quicnet.EarlyListener).
func listenQuicnet(impl quicnet.Impl) func(func(func() error) error, Config, *tls.Config) (web.Server, error) {
	return func(do func(func() error) error, cfg Config, stls *tls.Config) (web.Server, error) {
		qc := quicnetConfig(impl, true, cfg)
		var ln *quicnet.EarlyListener
		if err := do(func() (err error) {
			ln, err = quicnet.ListenEarly("udp", cfg.addr(), http3.ConfigureTLSConfig(stls), qc)
			return err
		}); err != nil {
			return nil, fmt.Errorf("quicnet listen: %w", err)
		}
		return web.NewHTTP3(&quicnetServer{srv: &http3.Server{Handler: web.NewHandler(), QUICConfig: qc}, ln: ln}, ln.Addr(), quicnetSettings(impl, true, cfg)), nil
	}
}

// earlyGET is the request method by which the mode's Setup asks the
// quicnet row for a GET in 0-RTT (quic-go's http3 has MethodGet0RTT):
// quicnetRT sends it as a GET on its Transport that sends safe first
// requests early, and every other request on the one that does not, so
// that the resumed setup stays a resumption without early data.
const earlyGET = "GET_0RTT"

// quicnetRT is a quicnet/http3 client of one connection: its GETs wait for
// the handshake, its earlyGET goes in 0-RTT when the session allows.
type quicnetRT struct {
	plain, early *http3.Transport
	mu           sync.Mutex
	last         *quicnet.Conn
}

func (rt *quicnetRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != earlyGET {
		return rt.plain.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Method = http.MethodGet
	return rt.early.RoundTrip(req)
}

// Used0RTT says whether the last connection's 0-RTT data was accepted.
func (rt *quicnetRT) Used0RTT() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.last != nil && rt.last.ConnectionState().Used0RTT
}

func (rt *quicnetRT) Close() error {
	return errors.Join(rt.plain.Close(), rt.early.Close())
}

func (rt *quicnetRT) keep(c *quicnet.Conn) {
	rt.mu.Lock()
	rt.last = c
	rt.mu.Unlock()
}

// quicnetClient is quicnet/http3's Transport over impl, dialing from do's
// namespace.
func quicnetClient(impl quicnet.Impl) func(string, func(func() error) error, Config, *tls.Config) (*web.Client, error) {
	return func(url string, do func(func() error) error, cfg Config, ctls *tls.Config) (*web.Client, error) {
		return newQuicnetClient(impl, url, do, cfg, ctls)
	}
}

func newQuicnetClient(impl quicnet.Impl, url string, do func(func() error) error, cfg Config, ctls *tls.Config) (*web.Client, error) {
	return &web.Client{
		Name: "h3/quicnet/" + impl.String(), URL: url, Settings: quicnetSettings(impl, false, cfg), EarlyMethod: earlyGET,
		New: func(cache tls.ClientSessionCache) (http.RoundTripper, error) {
			tc := ctls.Clone()
			tc.NextProtos = []string{http3.NextProtoH3}
			tc.ClientSessionCache = cache
			rt := &quicnetRT{}
			dial := func(ctx context.Context, addr string, tc *tls.Config, conf *quicnet.Config) (c *quicnet.Conn, err error) {
				err = do(func() error {
					c, err = quicnet.Dial(ctx, addr, tc, conf)
					return err
				})
				if err == nil {
					rt.keep(c)
				}
				return c, err
			}
			dialEarly := func(ctx context.Context, addr string, tc *tls.Config, conf *quicnet.Config, data []byte) (c *quicnet.Conn, s *quicnet.Stream, err error) {
				err = do(func() error {
					c, s, err = quicnet.DialEarly(ctx, addr, tc, conf, data)
					return err
				})
				if err == nil {
					rt.keep(c)
				}
				return c, s, err
			}
			rt.plain = &http3.Transport{TLSClientConfig: tc, QUICConfig: quicnetConfig(impl, false, cfg), Dial: dial, DisableCompression: true, Disable0RTT: true}
			rt.early = &http3.Transport{TLSClientConfig: tc, QUICConfig: quicnetConfig(impl, false, cfg), Dial: dial, DialEarly: dialEarly, DisableCompression: true}
			return rt, nil
		},
	}, nil
}
