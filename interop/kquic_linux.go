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
// hq-interop, and HTTP/3 through quicnet/http3 over kernel QUIC (kquicH3,
// where quicnet has kernel QUIC built in).
type Kquic struct{}

// kquicH3 is kquic's HTTP/3: nil in a build without kernel QUIC in quicnet
// (-tags nokquic).
var kquicH3 Impl

func openKquic() (Impl, error) {
	if err := kmod.Probe(kmod.FeatureQUIC); err != nil {
		return nil, fmt.Errorf("kquic: %w (kqbench interop --vm runs it in the guest with $KQUIC_MODULE)", err)
	}
	return Kquic{}, nil
}

// Name implements Impl.
func (Kquic) Name() string { return "kquic" }

// KernelQUIC says it runs over kernel QUIC.
func (Kquic) KernelQUIC() bool { return true }

// ALPNs implements Impl.
func (Kquic) ALPNs() []string {
	if kquicH3 != nil {
		return []string{HQ, H3}
	}
	return []string{HQ}
}

// SupportsALPN says what kquic cannot do over HTTP/3: quicnet's limits.
func (Kquic) SupportsALPN(role Role, c *Case, alpn string) error {
	if alpn == H3 && kquicH3 != nil {
		if err := kquicH3.Supports(role, c); err != nil {
			return fmt.Errorf("over HTTP/3 (quicnet/http3): %w", err)
		}
		if c.KeyUpdate && role == Client {
			// quic-go updates its keys by itself after 100 packets; the
			// kernel does not, and quicnet has no call to ask it.
			return unsupported("over HTTP/3 (quicnet/http3): quicnet has no call to update the keys, and kernel QUIC does not update them by itself")
		}
	}
	return nil
}

// Supports implements Impl.
func (Kquic) Supports(role Role, c *Case) error {
	if role == Client {
		return goClientLimits(c)
	}
	return nil
}

// Serve implements Impl.
func (Kquic) Serve(ctx context.Context, cfg ServerConfig) (*net.UDPAddr, func() error, error) {
	if cfg.ALPN == H3 {
		return kquicH3.Serve(ctx, cfg)
	}
	kc := &kquic.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cfg.Cert}, NextProtos: []string{cfg.ALPN}, KeyLogWriter: cfg.KeyLog},
		ValidatePeerAddress: cfg.Retry, Allow0RTT: true,
		// As the client's: under loss the module recovers a handshake
		// slowly, and kquic's default (10 s) ended some under TCG.
		HandshakeTimeout: 30 * time.Second}
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
	if cfg.ALPN == H3 {
		return kquicH3.Fetch(ctx, cfg)
	}
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
