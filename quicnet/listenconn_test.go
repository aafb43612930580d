package quicnet_test

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"kquic.dev/quicnet"
)

// TestListenConn: a listener serves on the caller's socket over quic-go
// (whatever Auto would choose: only quic-go can), Addr is the socket's,
// and closing the listener leaves the socket open for the caller; where
// kernel QUIC is asked for, or is all the build has (-tags kquic),
// ListenConn says to use Listen, with ErrPacketConn matching
// errors.ErrUnsupported.
func TestListenConn(t *testing.T) {
	ctls, stls := tlsConfigs(t)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	wantErrPacketConn := func(what string, ln *quicnet.Listener, err error) {
		t.Helper()
		if ln != nil || err != quicnet.ErrPacketConn || !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("%s: ListenConn = %v, %v; want nil, ErrPacketConn matching errors.ErrUnsupported", what, ln, err)
		}
	}
	ln, err := quicnet.ListenConn(udp, stls, &quicnet.Config{Implementation: quicnet.Kernel})
	wantErrPacketConn("Config.Implementation Kernel", ln, err)
	t.Setenv(quicnet.ImplementationEnv, "kquic")
	ln, err = quicnet.ListenConn(udp, stls, nil)
	wantErrPacketConn("$"+quicnet.ImplementationEnv+"=kquic", ln, err)
	os.Unsetenv(quicnet.ImplementationEnv)
	ln, err = quicnet.ListenConn(udp, stls, nil)
	if quicnet.Available(quicnet.QuicGo) != nil {
		wantErrPacketConn("without quic-go", ln, err)
		return
	}
	requireImpl(t) // the client
	if err != nil {
		t.Fatalf("ListenConn: %v", err)
	}
	if ln.Implementation() != quicnet.QuicGo {
		t.Errorf("Implementation() = %s, want quic-go", ln.Implementation())
	}
	if got, want := ln.Addr().String(), udp.LocalAddr().String(); got != want {
		t.Errorf("Addr = %s, want the socket's %s", got, want)
	}
	cli, srv := connect(t, ln, ctls, nil)
	echoStreams(srv)
	if got := string(echo(t, cli, []byte("over the caller's socket"))); got != "over the caller's socket" {
		t.Errorf("echo: %q", got)
	}
	cli.CloseWithError(0, "")
	srv.CloseWithError(0, "")
	if err := ln.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// The socket is the caller's still. quic-go's transport lets go of it
	// once the last connection has ended, after Close returns: until then
	// it reads (and drops) what arrives, so the peer sends until a read
	// here gets a datagram.
	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	deadline := time.Now().Add(30 * time.Second)
	buf := make([]byte, 16)
	for {
		if _, err := peer.WriteTo([]byte("pong"), udp.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		udp.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, _, err := udp.ReadFrom(buf)
		if err == nil && string(buf[:n]) == "pong" {
			break
		}
		if errors.Is(err, net.ErrClosed) {
			t.Fatalf("the listener closed the caller's socket: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the caller's socket received nothing in 30s after the listener and its connections closed: %q, %v", buf[:n], err)
		}
	}
	if _, err := udp.WriteTo([]byte("ping"), peer.LocalAddr()); err != nil {
		t.Fatalf("the caller's socket after the listener closed: WriteTo: %v", err)
	}
}

// TestListenConnArgs: a nil socket or TLS config is an error that says
// which.
func TestListenConnArgs(t *testing.T) {
	_, stls := tlsConfigs(t)
	if _, err := quicnet.ListenConn(nil, stls, nil); err == nil {
		t.Error("ListenConn(nil, ...) succeeded")
	}
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	if _, err := quicnet.ListenConn(udp, nil, nil); err == nil {
		t.Error("ListenConn without a tls.Config succeeded")
	}
}
