//go:build !kquic || !linux

package quicnet_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

// requireImpl skips nothing: quic-go runs everywhere.
func requireImpl(testing.TB) {}

// hasOriginal reports whether err keeps quic-go's own error.
func hasOriginal(err error) bool {
	var (
		ae *quic.ApplicationError
		te *quic.TransportError
		ie *quic.IdleTimeoutError
		he *quic.HandshakeTimeoutError
		se *quic.StreamError
		le *quic.StreamLimitReachedError
		de *quic.DatagramTooLargeError
	)
	return errors.As(err, &ae) || errors.As(err, &te) || errors.As(err, &ie) || errors.As(err, &he) ||
		errors.As(err, &se) || errors.As(err, &le) || errors.As(err, &de)
}

// directBulk is quicnetBulk straight on quic-go, configured as quicnet
// configures it by default.
func directBulk(b *testing.B) (io.WriteCloser, <-chan int64) {
	ctls, stls := tlsConfigs(b)
	conf := &quic.Config{HandshakeIdleTimeout: 5 * time.Second}
	ln, err := quic.ListenAddr("127.0.0.1:0", stls, conf)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	cli, err := quic.DialAddr(ctxT(b), ln.Addr().String(), ctls, conf)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cli.CloseWithError(0, "") })
	srv, err := ln.Accept(ctxT(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.CloseWithError(0, "") })
	done := sink(func() (io.Reader, error) { return srv.AcceptStream(context.Background()) })
	s, err := cli.OpenStreamSync(ctxT(b))
	if err != nil {
		b.Fatal(err)
	}
	return s, done
}
