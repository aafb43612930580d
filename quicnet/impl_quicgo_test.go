//go:build !kquic || !linux

package quicnet_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"kquic.dev/quicnet"
)

func init() {
	hooks[quicnet.QuicGo] = implHooks{hasOriginal: quicGoOriginal, watchStreamEnds: quicGoWatchStreamEnds, directBulk: quicGoDirectBulk}
}

// quicGoOriginal reports whether err keeps quic-go's own error.
func quicGoOriginal(err error) bool {
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

// quicGoWatchStreamEnds returns a function that waits until the whole of a
// stream the peer sends on c, its n bytes and its FIN, has arrived, none of
// it read: quic-go's Peek of a byte more than n returns io.EOF only then.
func quicGoWatchStreamEnds(t *testing.T, _ *quicnet.Conn) func(r *quicnet.ReceiveStream, n int) {
	return func(r *quicnet.ReceiveStream, n int) {
		t.Helper()
		qr := quicnet.QuicgoReceiveStream(r)
		qr.SetReadDeadline(time.Now().Add(30 * time.Second))
		defer qr.SetReadDeadline(time.Time{})
		if m, err := qr.Peek(make([]byte, n+1)); m != n || err != io.EOF {
			t.Fatalf("stream %d: peeked %d bytes, %v; want its %d bytes and io.EOF (the FIN)", r.StreamID(), m, err, n)
		}
	}
}

// quicGoDirectBulk is quicnetBulk straight on quic-go, configured as
// quicnet configures it by default.
func quicGoDirectBulk(b *testing.B) (io.WriteCloser, <-chan int64) {
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
