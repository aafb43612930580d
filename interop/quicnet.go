package interop

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"

	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// "quicnet" is quicnet/http3 over quic-go, an implementation of its own
// whatever the kernel has; over kernel QUIC it is kquic's HTTP/3
// (kquic_h3_linux.go).
func init() {
	RegisterImpl("quicnet", func() (Impl, error) {
		if err := quicnet.Available(quicnet.QuicGo); err != nil {
			return nil, fmt.Errorf("quicnet: %w", err)
		}
		return Quicnet{Impl: quicnet.QuicGo}, nil
	})
}

// Quicnet is this project's HTTP/3 (quicnet/http3) over one of quicnet's
// implementations (Impl; Auto: the one quicnet chooses here).
type Quicnet struct{ Impl quicnet.Impl }

// Name implements Impl.
func (Quicnet) Name() string { return "quicnet" }

// ALPNs implements Impl.
func (Quicnet) ALPNs() []string { return []string{H3} }

// Supports implements Impl.
func (Quicnet) Supports(role Role, c *Case) error {
	switch {
	case c.Retry && role == Server:
		return unsupported("quicnet has no setting for address validation with Retry")
	case c.Version2:
		return unsupported("quicnet speaks QUIC version 1 only")
	case role == Client:
		return goClientLimits(c)
	}
	return nil
}

// Serve implements Impl.
func (q Quicnet) Serve(ctx context.Context, cfg ServerConfig) (*net.UDPAddr, func() error, error) {
	tconf := &tls.Config{Certificates: []tls.Certificate{cfg.Cert}, NextProtos: []string{H3}, KeyLogWriter: cfg.KeyLog}
	ln, err := quicnet.Listen("udp", cfg.Addr, tconf, &quicnet.Config{Allow0RTT: true, Implementation: q.Impl})
	if err != nil {
		return nil, nil, err
	}
	srv := &http3.Server{Handler: http.FileServer(http.Dir(cfg.Root))}
	go srv.ServeListener(ln)
	return ln.Addr().(*net.UDPAddr), func() error {
		err := srv.Close()
		ln.Close()
		return err
	}, nil
}

// Fetch implements Impl.
func (q Quicnet) Fetch(ctx context.Context, cfg ClientConfig) error {
	tconf := clientTLS(cfg)
	tconf.NextProtos = []string{H3}
	for i, g := range groups(cfg) {
		tr := &http3.Transport{TLSClientConfig: tconf, QUICConfig: &quicnet.Config{Implementation: q.Impl}, Disable0RTT: !(cfg.ZeroRTT && i > 0)}
		err := fetchH3(ctx, tr, http.MethodGet, cfg, g)
		tr.Close()
		if err != nil {
			return fmt.Errorf("connection %d: %w", i+1, err)
		}
	}
	return nil
}

// fetchH3 gets paths with an http.RoundTripper into cfg.Download, up to
// maxFetches at a time (over one connection where rt pools them, as
// quic-go's and quicnet's HTTP/3 transports do).
func fetchH3(ctx context.Context, rt http.RoundTripper, method string, cfg ClientConfig, paths []string) error {
	return fetchEach(paths, func(p string) error { return fetchOneH3(ctx, rt, method, cfg, p) })
}

// fetchOneH3 gets one path with rt into cfg.Download.
func fetchOneH3(ctx context.Context, rt http.RoundTripper, method string, cfg ClientConfig, p string) error {
	req, err := http.NewRequestWithContext(ctx, method, "https://"+cfg.Server.String()+p, nil)
	if err != nil {
		return err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	f, err := os.Create(filepath.Join(cfg.Download, path.Base(p)))
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	return errors.Join(err, f.Close())
}
