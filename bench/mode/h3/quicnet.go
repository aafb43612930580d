//go:build linux

package h3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"

	"kquic.dev/bench/web"
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
// QUIC implementation compiled in.
func quicnetSettings(server bool) web.Settings {
	s := web.Settings{Protocol: "h3", Stack: "quicnet/" + quicnet.Implementation}
	if quicnet.Implementation == "kquic" {
		s.StreamWindow, s.ConnWindow = kquicStreamWindow, kquicConnWindow
		s.Notes = append(s.Notes, fmt.Sprintf("stream window %d bytes, connection %d: the kernel QUIC module's defaults (quicnet sets none)", s.StreamWindow, s.ConnWindow))
	} else {
		s.StreamWindow, s.ConnWindow, s.Autotuned, s.InitialStreamWindow = quicGoStreamWindow, quicGoConnWindow, true, quicGoStreamStart
		s.Notes = append(s.Notes, "stream window quic-go's default, 512 KiB autotuned up to 6 MiB (quicnet sets none)")
	}
	if server {
		s.MaxStreams = quicnetMaxStreams
	}
	s.Notes = append(s.Notes, "UDP receive buffer: the implementation's own (quicnet does not expose the socket)")
	return s
}

// quicnetServer is http3.Server on its quicnet listener: a
// web.HTTP3Server.
type quicnetServer struct {
	srv *http3.Server
	ln  *quicnet.Listener
}

func (s *quicnetServer) Serve() error { return s.srv.Serve(s.ln) }

func (s *quicnetServer) Close() error {
	err := s.srv.Close()
	if cerr := s.ln.Close(); cerr != nil && !errors.Is(cerr, quicnet.ErrServerClosed) {
		err = errors.Join(err, cerr)
	}
	return err
}

// listenQuicnet serves the handler with this project's HTTP/3 over
// quicnet (kernel QUIC with -tags kquic, quic-go without).
func listenQuicnet(do func(func() error) error, cfg Config, stls *tls.Config) (web.Server, error) {
	qc := &quicnet.Config{MaxIncomingStreams: quicnetMaxStreams}
	var ln *quicnet.Listener
	if err := do(func() (err error) {
		ln, err = quicnet.Listen("udp", cfg.addr(), http3.ConfigureTLSConfig(stls), qc)
		return err
	}); err != nil {
		return nil, fmt.Errorf("quicnet listen: %w", err)
	}
	return web.NewHTTP3(&quicnetServer{srv: &http3.Server{Handler: web.NewHandler(), QUICConfig: qc}, ln: ln}, ln.Addr(), quicnetSettings(true)), nil
}

// quicnetClient is quicnet/http3's Transport, dialing from do's namespace.
func quicnetClient(url string, do func(func() error) error, cfg Config, ctls *tls.Config) (*web.Client, error) {
	dial := func(ctx context.Context, addr string, tc *tls.Config, conf *quicnet.Config) (c *quicnet.Conn, err error) {
		err = do(func() error {
			c, err = quicnet.Dial(ctx, addr, tc, conf)
			return err
		})
		return c, err
	}
	return &web.Client{
		Name: "h3/quicnet/" + quicnet.Implementation, URL: url, Settings: quicnetSettings(false),
		NoEarlyData: quicnetNo0RTT,
		New: func(cache tls.ClientSessionCache) (http.RoundTripper, error) {
			tc := ctls.Clone()
			tc.NextProtos = []string{http3.NextProtoH3}
			tc.ClientSessionCache = cache
			return &http3.Transport{TLSClientConfig: tc, QUICConfig: &quicnet.Config{}, Dial: dial, DisableCompression: true}, nil
		},
	}, nil
}
