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
	drain(ctx, acceptAll(ctx, c.AcceptUniStream), acceptAll(ctx, c.AcceptStream), c.Context().Done(), func() { c.CloseWithError(0, "") })
}

// acceptAll adapts a typed Accept to drain's.
func acceptAll[S io.Reader](ctx context.Context, accept func(context.Context) (S, error)) func() (io.Reader, error) {
	return func() (io.Reader, error) { return accept(ctx) }
}

// drain reads every stream accept gives, each to its end and discarded,
// until the connection ends (done) or ctx does, which closes it.
func drain(ctx context.Context, acceptUni, acceptBidi func() (io.Reader, error), done <-chan struct{}, closeConn func()) {
	for _, accept := range []func() (io.Reader, error){acceptUni, acceptBidi} {
		go func() {
			for {
				s, err := accept()
				if err != nil {
					return
				}
				go io.Copy(io.Discard, s)
			}
		}()
	}
	select {
	case <-ctx.Done():
		closeConn()
	case <-done:
	}
}
