//go:build kquic && linux

package quicnet_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"kquic.dev/handshake"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// requireImpl skips (or fails, where $KQUIC_REQUIRE lists quic) without the
// kernel QUIC module.
func requireImpl(t testing.TB) {
	t.Helper()
	testenv.Require(t, kmod.FeatureQUIC)
}

// hasOriginal reports whether err keeps kquic's own error.
func hasOriginal(err error) bool {
	var (
		ce *kquic.CloseError
		ie *kquic.IdleTimeoutError
		se *kquic.StreamError
		de *kquic.DatagramTooLargeError
		pe *handshake.PeerClosedError
	)
	return errors.As(err, &ce) || errors.As(err, &ie) || errors.As(err, &se) || errors.As(err, &de) ||
		errors.As(err, &pe) || errors.Is(err, handshake.ErrTimeout) || errors.Is(err, kquic.ErrStreamLimit)
}

// directBulk is quicnetBulk straight on kquic, configured as quicnet
// configures it by default.
func directBulk(b *testing.B) (io.WriteCloser, <-chan int64) {
	requireImpl(b)
	ctls, stls := tlsConfigs(b)
	ln, err := kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{TLS: stls, HandshakeTimeout: 10 * time.Second, StreamDataNoDelay: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	cli, err := kquic.Dial(ctxT(b), "udp", ln.Addr().String(), &kquic.Config{TLS: ctls, HandshakeTimeout: 10 * time.Second, StreamDataNoDelay: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cli.Close() })
	srv, err := ln.Accept(ctxT(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	done := sink(func() (io.Reader, error) { return srv.AcceptStream(context.Background()) })
	s, err := cli.OpenStreamSync(ctxT(b))
	if err != nil {
		b.Fatal(err)
	}
	return s, done
}
