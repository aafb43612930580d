//go:build linux

package kquic_test

// The close part of func_test.c's checklist, Close unblocking every kind of
// waiter, and a goroutine and descriptor leak check over many connections.

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"kquic.dev/internal/parked"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// TestFuncCloseWithError: the peer's CloseWithError(10, "this is app err")
// reaches us as a *CloseError on the pending and later operations and as a
// ConnectionCloseEvent.
func TestFuncCloseWithError(t *testing.T) {
	cli, srv := funcPair(t, &kquic.Config{Events: []kquic.EventType{kquic.EventConnectionClose}}, nil)
	pending := make(chan error, 1)
	go func() {
		_, err := cli.AcceptStream(ctxT(t))
		pending <- err
	}()
	if got := echo(t, cli, "client close"); got != "client close" {
		t.Fatalf("echo %q", got)
	}
	want := func(what string, err error) {
		t.Helper()
		var ce *kquic.CloseError
		if !errors.As(err, &ce) || !ce.Remote || ce.ErrorCode != 10 || ce.Reason != "this is app err" || ce.FrameType != 0 {
			t.Errorf("%s: %v (%#v); want CloseError{Remote: true, ErrorCode: 10, Reason: \"this is app err\"}", what, err, ce)
		}
		if errors.Is(err, kquic.ErrClosed) {
			t.Errorf("%s: the peer's close matches ErrClosed, which is for our own", what)
		}
	}
	select {
	case err := <-pending:
		want("pending AcceptStream", err)
	case <-time.After(10 * time.Second):
		t.Fatal("AcceptStream still blocked after the peer closed")
	}
	e := nextEvent(t, cli, "ConnectionCloseEvent", func(e kquic.Event) bool { return e.Type() == kquic.EventConnectionClose }).(*kquic.ConnectionCloseEvent)
	if !e.Application || e.ErrorCode != 10 || e.FrameType != 0 || e.Reason != "this is app err" {
		t.Errorf("ConnectionCloseEvent %+v; want code 10, frame 0, \"this is app err\"", e)
	}
	<-cli.Done()
	want("Err", cli.Err())
	_, err := cli.OpenStream()
	want("OpenStream", err)
	_, err = cli.OpenStreamSync(ctxT(t))
	want("OpenStreamSync", err)
	_, err = cli.ReceiveDatagram(ctxT(t))
	want("ReceiveDatagram", err)
	// A stream opened before the close fails on write and read.
	_, err = cli.ReceiveEvent(ctxT(t))
	want("ReceiveEvent once the queue is empty", err)
	// Our own side: Err of the closing connection is our close.
	<-srv.Done()
	var ce *kquic.CloseError
	if err := srv.Err(); !errors.As(err, &ce) || ce.Remote || ce.ErrorCode != 10 || !errors.Is(err, kquic.ErrClosed) || !errors.Is(err, net.ErrClosed) {
		t.Errorf("server Err after CloseWithError = %v; want a local CloseError matching ErrClosed", err)
	}
	if err := cli.Close(); err != nil {
		t.Errorf("Close after the peer closed: %v", err)
	}
}

// TestFuncCloseStreamOps: a stream in use when the peer closes fails with
// the peer's CloseError on Read and Write.
func TestFuncCloseStreamOps(t *testing.T) {
	cli, srv := pair(t, nil, nil)
	s, _ := cli.OpenStream()
	s.Write([]byte("open"))
	ss, err := srv.AcceptStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	ss.Read(make([]byte, 4))
	readErr := make(chan error, 1)
	go func() {
		_, err := s.Read(make([]byte, 10))
		readErr <- err
	}()
	parked.Wait(t, "kquic.dev/kquic.(*Stream).Read") // the close comes to a waiting Read
	srv.CloseWithError(10, "this is app err")
	var ce *kquic.CloseError
	select {
	case err := <-readErr:
		if !errors.As(err, &ce) || !ce.Remote || ce.ErrorCode != 10 {
			t.Errorf("pending Read: %v, want the peer's CloseError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read still blocked after the peer closed")
	}
	s.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := s.Write([]byte("late")); !errors.As(err, &ce) || !ce.Remote || ce.ErrorCode != 10 {
		t.Errorf("Write after the peer closed: %v, want the peer's CloseError", err)
	}
	if err := s.Close(); !errors.As(err, &ce) || !ce.Remote {
		t.Errorf("stream Close after the peer closed: %v, want the peer's CloseError", err)
	}
	if err := cli.CloseWithError(1, string(make([]byte, 64))); err == nil {
		t.Error("CloseWithError with a 64-byte reason succeeded (the kernel takes 63)")
	}
}

// TestFuncIdleTimeout: a connection left quiet past its idle timeout ends
// with an *IdleTimeoutError (a net.Error with Timeout true), not as a close
// by the peer.
func TestFuncIdleTimeout(t *testing.T) {
	tp := kquic.TransportParameters{MaxIdleTimeout: time.Second}
	cli, srv := pair(t, &kquic.Config{Transport: tp}, &kquic.Config{Transport: tp})
	for _, c := range []*kquic.Conn{cli, srv} {
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("connection still open 10s after a 1s idle timeout")
		}
		var ne net.Error
		if err := c.Err(); !errors.As(err, new(*kquic.IdleTimeoutError)) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("Err after the idle timeout: %v, want *IdleTimeoutError", err)
		}
	}
}

// TestFuncCloseUnblocks: our own Close wakes every kind of waiter, which
// then reports ErrClosed.
func TestFuncCloseUnblocks(t *testing.T) {
	// The server grants 1200 bytes of credit per client stream and never
	// reads, so a large Write blocks in flow control.
	scfg := &kquic.Config{Transport: kquic.TransportParameters{MaxStreamDataBidiRemote: 1200}}
	ccfg := &kquic.Config{Transport: kquic.TransportParameters{MaxDatagramFrameSize: 1400}, Events: []kquic.EventType{kquic.EventKeyUpdate}}
	cli, _ := pair(t, ccfg, scfg)
	s, _ := cli.OpenStream()
	r, _ := cli.OpenStream()
	r.Write([]byte("r"))
	ctx := context.Background()
	ops := map[string]func() error{
		"Stream.Write":    func() error { _, err := s.Write(make([]byte, 1<<20)); return err },
		"Stream.Read":     func() error { _, err := r.Read(make([]byte, 10)); return err },
		"AcceptStream":    func() error { _, err := cli.AcceptStream(ctx); return err },
		"AcceptUniStream": func() error { _, err := cli.AcceptUniStream(ctx); return err },
		"ReceiveDatagram": func() error { _, err := cli.ReceiveDatagram(ctx); return err },
		"ReceiveEvent":    func() error { _, err := cli.ReceiveEvent(ctx); return err },
	}
	type res struct {
		name string
		err  error
	}
	done := make(chan res, len(ops))
	for name, op := range ops {
		go func() { done <- res{name, op()} }()
	}
	select {
	case r := <-done:
		t.Fatalf("%s returned before Close: %v", r.name, r.err)
	case <-time.After(500 * time.Millisecond):
	}
	closed := time.Now()
	if err := cli.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for range ops {
		select {
		case r := <-done:
			if !errors.Is(r.err, kquic.ErrClosed) || !errors.Is(r.err, net.ErrClosed) {
				t.Errorf("%s after Close: %v, want ErrClosed", r.name, r.err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("some operations still blocked %v after Close", time.Since(closed))
		}
	}
	if _, err := cli.OpenStream(); !errors.Is(err, kquic.ErrClosed) {
		t.Errorf("OpenStream after Close: %v, want ErrClosed", err)
	}
	if err := cli.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestFuncLeaks: connections that succeed and handshakes that fail (no
// listener, untrusted certificate, ALPN mismatch) leave no goroutines or
// descriptors behind.
func TestFuncLeaks(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	ctls, stls := tlsPair(t)
	cycle := func() {
		ln, err := kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{TLS: stls, HandshakeTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ctx := ctxT(t)
		// Success, with a stream each way.
		for range 2 {
			c, err := kquic.DialAddr(ctx, ln.AddrPort(), &kquic.Config{TLS: ctls})
			if err != nil {
				t.Fatal(err)
			}
			s, err := ln.Accept(ctx)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := c.OpenStream()
			st.Write([]byte("x"))
			st.Close()
			ss, err := s.AcceptStream(ctx)
			if err == nil {
				ss.Read(make([]byte, 1))
			}
			s.Close()
			c.Close()
		}
		fail := func(what string, addr netip.AddrPort, cfg *kquic.Config) {
			t.Helper()
			if cfg.HandshakeTimeout == 0 {
				cfg.HandshakeTimeout = 1 * time.Second
			}
			c, err := kquic.DialAddr(ctx, addr, cfg)
			if err == nil {
				c.Close()
				t.Fatalf("%s: dial succeeded", what)
			}
		}
		// No listener on the port.
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		free := u.LocalAddr().(*net.UDPAddr).AddrPort()
		u.Close()
		fail("no listener", free, &kquic.Config{TLS: ctls, HandshakeTimeout: 300 * time.Millisecond})
		// A certificate from an unknown CA.
		fail("untrusted certificate", ln.AddrPort(), &kquic.Config{TLS: &tls.Config{ServerName: "server.test", NextProtos: []string{"kq"}}})
		// An ALPN the listener does not have.
		fail("ALPN mismatch", ln.AddrPort(), &kquic.Config{TLS: &tls.Config{RootCAs: ctls.RootCAs, ServerName: "server.test", NextProtos: []string{"nope"}}, HandshakeTimeout: 500 * time.Millisecond})
	}
	cycle() // warm up: the poller, certificate pools, lazily started runtime goroutines
	runtime.GC()
	baseG, baseFD := runtime.NumGoroutine(), openFDs(t)
	for range 3 {
		cycle()
	}
	var g, fd int
	if !eventually(10*time.Second, func() bool {
		runtime.GC()
		g, fd = runtime.NumGoroutine(), openFDs(t)
		return g <= baseG && fd <= baseFD
	}) {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("after 3 cycles: %d goroutines (baseline %d), %d descriptors (baseline %d)\n%s", g, baseG, fd, baseFD, buf[:n])
	}
}

func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestFuncCloseSendsNoHandshakePhrase: the handshake marks the kernel's
// close record with a phrase of its own (handshake.Session.CloseMarker, to
// tell our kernel's closes from the peer's); a plain Close must not send it:
// the peer sees code 0 and no reason, each way.
func TestFuncCloseSendsNoHandshakePhrase(t *testing.T) {
	for _, closer := range []string{"client", "server"} {
		t.Run(closer, func(t *testing.T) {
			cli, srv := funcPair(t, nil, nil)
			if got := echo(t, cli, "hi"); got != "hi" {
				t.Fatalf("echo %q", got)
			}
			a, b := cli, srv
			if closer == "server" {
				a, b = srv, cli
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			_, err := b.AcceptStream(ctxT(t))
			var ce *kquic.CloseError
			if !errors.As(err, &ce) || !ce.Remote || ce.ErrorCode != 0 || ce.Reason != "" {
				t.Errorf("the peer of a plain Close sees %v (%#v); want a remote CloseError with code 0 and no reason", err, ce)
			}
		})
	}
}
