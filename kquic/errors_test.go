//go:build linux

package kquic_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// TestErrNotSupported: where the kernel has no QUIC module (this host's
// kernel, or any without the module loaded), Dial and Listen fail with an
// error matching ErrNotSupported that keeps the errno and the operation.
func TestErrNotSupported(t *testing.T) {
	if kmod.Probe(kmod.FeatureQUIC) == nil {
		t.Skip("the QUIC module is loaded here: nothing to refuse")
	}
	ctls, stls := tlsPair(t)
	_, err := kquic.Dial(context.Background(), "udp", "127.0.0.1:4433", &kquic.Config{TLS: ctls})
	var op *net.OpError
	if !errors.Is(err, kquic.ErrNotSupported) || !errors.As(err, &op) || op.Op != "dial" {
		t.Errorf("Dial without the module = %v, want a dial *net.OpError matching ErrNotSupported", err)
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Dial without the module = %v: does not match errors.ErrUnsupported", err)
	}
	if !errors.Is(err, syscall.EPROTONOSUPPORT) && !errors.Is(err, syscall.EAFNOSUPPORT) {
		t.Errorf("Dial without the module = %v: the errno is not reachable", err)
	}
	_, err = kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{TLS: stls})
	if !errors.Is(err, kquic.ErrNotSupported) || !errors.As(err, &op) || op.Op != "listen" {
		t.Errorf("Listen without the module = %v, want a listen *net.OpError matching ErrNotSupported", err)
	}
}

// TestEveryEndIsNetErrClosed: our close, the peer's close, the idle timeout
// and a failed handshake all match net.ErrClosed, as in net and quic-go.
func TestEveryEndIsNetErrClosed(t *testing.T) {
	t.Run("ours", func(t *testing.T) {
		cli, _ := pair(t, nil, nil)
		cli.CloseWithError(7, "done")
		if _, err := cli.OpenStream(); !errors.Is(err, net.ErrClosed) || !errors.Is(err, kquic.ErrClosed) {
			t.Errorf("OpenStream after our close = %v", err)
		}
	})
	t.Run("peer's", func(t *testing.T) {
		cli, srv := pair(t, nil, nil)
		srv.CloseWithError(0x100, "H3_NO_ERROR")
		<-cli.Done()
		err := cli.Err()
		var ce *kquic.CloseError
		if !errors.Is(err, net.ErrClosed) || errors.Is(err, kquic.ErrClosed) || !errors.As(err, &ce) {
			t.Fatalf("Err after the peer's close = %v, want net.ErrClosed but not ErrClosed", err)
		}
		// 0x100 is an application's code here (HTTP/3's H3_NO_ERROR), not
		// a TLS alert: the frame says so, not the value.
		if !ce.Application || ce.ErrorCode != 0x100 || strings.Contains(err.Error(), "transport") || strings.Contains(strings.ToLower(err.Error()), "alert") {
			t.Errorf("the peer's application close 0x100 reads as %q (%+v)", err, ce)
		}
	})
	t.Run("idle", func(t *testing.T) {
		tp := kquic.TransportParameters{MaxIdleTimeout: time.Second}
		cli, _ := pair(t, &kquic.Config{Transport: tp}, &kquic.Config{Transport: tp})
		select {
		case <-cli.Done():
		case <-time.After(15 * time.Second):
			t.Fatal("still open 15s after a 1s idle timeout")
		}
		if err := cli.Err(); !errors.Is(err, net.ErrClosed) || !errors.As(err, new(*kquic.IdleTimeoutError)) {
			t.Errorf("Err after the idle timeout = %v", err)
		}
	})
	t.Run("handshake", func(t *testing.T) {
		ln := hsListen(t, &kquic.Config{HandshakeTimeout: 3 * time.Second})
		ctls, _ := tlsPair(t, "not-offered")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := kquic.DialAddr(ctx, ln.AddrPort(), &kquic.Config{TLS: ctls, HandshakeTimeout: 3 * time.Second})
		var op *net.OpError
		if !errors.Is(err, net.ErrClosed) || !errors.As(err, &op) || op.Op != "dial" || op.Addr.String() != ln.AddrPort().String() {
			t.Errorf("Dial with a wrong ALPN = %v, want a dial *net.OpError to %v matching net.ErrClosed", err, ln.AddrPort())
		}
	})
}

// TestDatagramQueueIsBounded: datagrams nobody receives stop at
// Config.DatagramQueue; the rest are dropped and counted.
func TestDatagramQueueIsBounded(t *testing.T) {
	tp := kquic.TransportParameters{MaxDatagramFrameSize: 1200}
	cli, srv := pair(t, &kquic.Config{Transport: tp}, &kquic.Config{Transport: tp, DatagramQueue: 16})
	const sent = 200
	for i := 0; i < sent; i++ {
		if err := cli.SendDatagram([]byte("datagram")); err != nil {
			t.Fatal(err)
		}
	}
	// A stream behind the datagrams: once its data arrived, so did they (or
	// they were lost, which loopback does not do).
	s, _ := cli.OpenStream()
	s.Write([]byte("end"))
	s.Close()
	r, err := srv.AcceptStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(r)
	time.Sleep(200 * time.Millisecond)
	got := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := srv.ReceiveDatagram(ctx)
		cancel()
		if err != nil {
			break
		}
		got++
	}
	dropped := srv.DatagramsDropped()
	t.Logf("sent %d, queued %d, dropped %d", sent, got, dropped)
	if got > 16 || dropped == 0 || uint64(got)+dropped > sent {
		t.Errorf("sent %d: queued %d (at most 16), dropped %d", sent, got, dropped)
	}
}

// TestEventQueueIsBounded: events nobody receives stop at Config.EventQueue;
// the peer makes the rest (two stream updates for each stream it opens and
// finishes: RECV, RECVD), and they are dropped and counted, while the
// connection itself keeps handling them. Once drained, the queue takes
// events again and drops no more.
func TestEventQueueIsBounded(t *testing.T) {
	const bound, streams = 8, 40
	cli, srv := pair(t, nil, &kquic.Config{Events: []kquic.EventType{kquic.EventStreamUpdate}, EventQueue: bound})
	for i := 0; i < streams; i++ {
		u, err := cli.OpenUniStreamSync(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := u.Write([]byte("event")); err != nil {
			t.Fatal(err)
		}
		u.Close()
	}
	// A stream behind the others: the kernel queues events ahead of stream
	// data, so once its data is read, the events of the streams before it
	// have been received.
	s, _ := cli.OpenStream()
	s.Write([]byte("end"))
	s.Close()
	r, err := srv.AcceptStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	r.SetReadDeadline(time.Now().Add(20 * time.Second))
	if b, err := io.ReadAll(r); string(b) != "end" || err != nil {
		t.Fatalf("read of the last stream: %q, %v", b, err)
	}
	dropped := srv.EventsDropped()
	got := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := srv.ReceiveEvent(ctx)
		cancel()
		if err != nil {
			break
		}
		got++
	}
	t.Logf("%d streams: %d events queued, %d dropped", streams+1, got, dropped)
	if got != bound || dropped == 0 || uint64(got)+dropped < streams {
		t.Errorf("%d streams: %d events queued (want the bound, %d), %d dropped (want at least %d in all)", streams+1, got, bound, dropped, streams-bound)
	}
	// The connection handled every stream all the same.
	n := 0
	for ; n < streams; n++ {
		if _, err := srv.AcceptUniStream(ctxT(t)); err != nil {
			t.Fatalf("accept uni stream %d of %d: %v", n, streams, err)
		}
	}
	// Drained, the queue takes the next event.
	u, _ := cli.OpenUniStream()
	u.Write([]byte("again"))
	u.Close()
	e, err := srv.ReceiveEvent(ctxT(t))
	if su, ok := e.(*kquic.StreamUpdateEvent); err != nil || !ok || su.StreamID != u.StreamID() {
		t.Errorf("event after draining = %+v, %v; want a stream update of stream %d", e, err, u.StreamID())
	}
	if d := srv.EventsDropped(); d != dropped {
		t.Errorf("EventsDropped went from %d to %d with the queue drained", dropped, d)
	}
}
