package conformance

import (
	"context"
	"crypto/tls"
	"io"
	"time"

	"github.com/quic-go/quic-go"
)

func init() { Register("quic-go", func() (Target, error) { return QuicGo{}, nil }) }

// QuicGo is quic-go as a library.
type QuicGo struct{}

// Name implements Target.
func (QuicGo) Name() string { return "quic-go" }

func quicGoConfig() *quic.Config {
	return &quic.Config{MaxIdleTimeout: 10 * time.Second, EnableDatagrams: false}
}

// Serve implements Target.
func (QuicGo) Serve(ctx context.Context, cfg *tls.Config) (string, error) {
	ln, err := quic.ListenAddr("127.0.0.1:0", cfg, quicGoConfig())
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
				return
			}
			go drainQuicGo(ctx, c)
		}
	}()
	return ln.Addr().String(), nil
}

// Connect implements Target.
func (QuicGo) Connect(ctx context.Context, addr string, cfg *tls.Config) error {
	c, err := quic.DialAddr(ctx, addr, cfg, quicGoConfig())
	if err != nil {
		return err
	}
	drainQuicGo(ctx, c)
	return nil
}

// drainQuicGo reads every stream the peer opens until the connection ends.
func drainQuicGo(ctx context.Context, c *quic.Conn) {
	go func() {
		for {
			s, err := c.AcceptUniStream(ctx)
			if err != nil {
				return
			}
			go io.Copy(io.Discard, s)
		}
	}()
	go func() {
		for {
			s, err := c.AcceptStream(ctx)
			if err != nil {
				return
			}
			go io.Copy(io.Discard, s)
		}
	}()
	select {
	case <-ctx.Done():
		c.CloseWithError(0, "")
	case <-c.Context().Done():
	}
}
