//go:build linux && (kquic || !nokquic)

package quicnet_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"kquic.dev/handshake"
	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
	"kquic.dev/quicnet"
)

func init() {
	hooks[quicnet.Kernel] = implHooks{require: requireKernel, hasOriginal: kquicOriginal, watchStreamEnds: kquicWatchStreamEnds, directBulk: kquicDirectBulk}
}

// requireKernel skips (or fails, where $KQUIC_REQUIRE lists quic) without
// the kernel QUIC module.
func requireKernel(t testing.TB) {
	t.Helper()
	testenv.Require(t, kmod.FeatureQUIC)
}

// kquicOriginal reports whether err keeps kquic's own error.
func kquicOriginal(err error) bool {
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

// kquicWatchStreamEnds turns c's stream update events on and returns a function
// that waits until the whole of a stream the peer sends on c from now on,
// its n bytes and its FIN, has arrived, none of it read: the kernel's
// RECV_STATE_RECVD event (all data received) with the final size n.
func kquicWatchStreamEnds(t *testing.T, c *quicnet.Conn) func(r *quicnet.ReceiveStream, n int) {
	t.Helper()
	kc := quicnet.KquicConn(c)
	if err := kc.SetEventEnabled(kquic.EventStreamUpdate, true); err != nil {
		t.Fatal(err)
	}
	return func(r *quicnet.ReceiveStream, n int) {
		t.Helper()
		defer kc.SetEventEnabled(kquic.EventStreamUpdate, false)
		for {
			ev, err := kc.ReceiveEvent(ctxT(t))
			if err != nil {
				t.Fatalf("stream %d: no RECV_STATE_RECVD event: %v", r.StreamID(), err)
			}
			if e, ok := ev.(*kquic.StreamUpdateEvent); ok && e.StreamID == int64(r.StreamID()) && e.State == quicabi.QUIC_STREAM_RECV_STATE_RECVD {
				if e.FinalSize != uint64(n) {
					t.Fatalf("stream %d: all received at %d bytes, want %d", r.StreamID(), e.FinalSize, n)
				}
				return
			}
		}
	}
}

// kquicDirectBulk is quicnetBulk straight on kquic, configured as quicnet
// configures it by default.
func kquicDirectBulk(b *testing.B) (io.WriteCloser, <-chan int64) {
	requireImplOf(b, quicnet.Kernel)
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
