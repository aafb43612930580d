package interop

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

func init() { RegisterImpl("kquic", openKquic) }

// Kquic is kernel QUIC through this project's bindings, speaking
// hq-interop (HTTP/3 over kernel QUIC is quicnet's, where the module is
// loaded).
type Kquic struct{}

func openKquic() (Impl, error) {
	if err := kmod.Probe(kmod.FeatureQUIC); err != nil {
		return nil, fmt.Errorf("kquic: %w (kqbench interop --vm runs it in the guest with $KQUIC_MODULE)", err)
	}
	return Kquic{}, nil
}

// Name implements Impl.
func (Kquic) Name() string { return "kquic" }

// ALPNs implements Impl.
func (Kquic) ALPNs() []string { return []string{HQ} }

// Supports implements Impl.
func (Kquic) Supports(role Role, c *Case) error {
	if role == Client {
		return goClientLimits(c)
	}
	return nil
}

// Serve implements Impl.
func (Kquic) Serve(ctx context.Context, cfg ServerConfig) (*net.UDPAddr, func() error, error) {
	kc := &kquic.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cfg.Cert}, NextProtos: []string{cfg.ALPN}, KeyLogWriter: cfg.KeyLog},
		ValidatePeerAddress: cfg.Retry, Allow0RTT: true}
	ln, err := kquic.Listen("udp", cfg.Addr, kc)
	if err != nil {
		return nil, nil, err
	}
	go func() {
		for {
			c, err := ln.Accept(context.Background())
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				fmt.Fprintf(cfg.Output, "accept: %v\n", err)
				continue
			}
			go serveHQConn(func() (hqStream, error) { return c.AcceptStream(context.Background()) }, cfg.Root)
		}
	}()
	return ln.Addr().(*net.UDPAddr), ln.Close, nil
}

// Fetch implements Impl.
func (Kquic) Fetch(ctx context.Context, cfg ClientConfig) error {
	tconf := clientTLS(cfg) // ChaCha20 alone: Supports says unsupported
	// The module recovers a lost handshake more slowly than quic-go (README,
	// known module bugs and limits): the runner gives a case minutes.
	kc := &kquic.Config{TLS: tconf, CompactClientHello: true, HandshakeTimeout: 30 * time.Second}
	if cfg.Version2 {
		kc.Version = kquic.Version2
	}
	for i, g := range groups(cfg) {
		if err := fetchKquic(ctx, cfg, kc, g, cfg.ZeroRTT && i > 0); err != nil {
			return fmt.Errorf("connection %d: %w", i+1, err)
		}
	}
	return nil
}

func fetchKquic(ctx context.Context, cfg ClientConfig, kc *kquic.Config, paths []string, early bool) error {
	var c *kquic.Conn
	var err error
	rest := paths
	if early {
		// The first request goes in 0-RTT on stream 0 (kquic.DialEarly).
		var s *kquic.Stream
		c, s, err = kquic.DialEarly(ctx, "udp", cfg.Server.String(), kc, []byte("GET "+paths[0]+"\r\n"))
		if err != nil {
			return err
		}
		defer c.Close()
		if err := s.Close(); err != nil {
			return err
		}
		if err := saveStream(s, cfg.Download, paths[0]); err != nil {
			return err
		}
		rest = paths[1:]
	} else {
		if c, err = kquic.Dial(ctx, "udp", cfg.Server.String(), kc); err != nil {
			return err
		}
		defer c.Close()
	}
	if cfg.KeyUpdate {
		if err := c.UpdateKeys(); err != nil {
			return fmt.Errorf("key update: %w", err)
		}
	}
	return fetchHQ(ctx, func(ctx context.Context) (hqStream, error) { return c.OpenStreamSync(ctx) }, rest, cfg.Download)
}
