package conformance

import (
	"context"
	"crypto/tls"
	"fmt"

	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

func init() { Register("kquic", openKquic) }

// Kquic is kernel QUIC through the kquic package.
type Kquic struct{}

func openKquic() (Target, error) {
	if err := kmod.Probe(kmod.FeatureQUIC); err != nil {
		return nil, fmt.Errorf("kquic: %w", err)
	}
	return Kquic{}, nil
}

// Name implements Target.
func (Kquic) Name() string { return "kquic" }

// Serve implements Target.
func (Kquic) Serve(ctx context.Context, cfg *tls.Config) (string, error) {
	ln, err := kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{TLS: cfg})
	if err != nil {
		return "", err
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		for {
			c, err := ln.Accept(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				continue // a handshake the rule broke
			}
			go drainKquic(ctx, c)
		}
	}()
	return ln.Addr().String(), nil
}

// Connect implements Target.
func (Kquic) Connect(ctx context.Context, addr string, cfg *tls.Config) error {
	c, err := kquic.Dial(ctx, "udp", addr, &kquic.Config{TLS: cfg})
	if err != nil {
		return err
	}
	drainKquic(ctx, c)
	return nil
}

func drainKquic(ctx context.Context, c *kquic.Conn) {
	drain(ctx, acceptAll(ctx, c.AcceptUniStream), acceptAll(ctx, c.AcceptStream), c.Done(), func() { c.Close() })
}
