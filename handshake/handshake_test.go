//go:build linux

package handshake_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/handshake"
	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

func tlsConfigs(t *testing.T) (client, server *tls.Config) {
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: pool, ServerName: "server.test", NextProtos: []string{"kq"}},
		&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"kq"}}
}

// pair sets up a listener and a connected client socket on loopback.
func pair(t *testing.T) (ln, cli *quicsock.Socket) {
	t.Helper()
	testenv.Require(t, kmod.FeatureQUIC)
	ln, err := quicsock.New(unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := ln.Bind(netip.MustParseAddrPort("127.0.0.1:0")); err != nil {
		t.Fatal(err)
	}
	if err := ln.Listen(8); err != nil {
		t.Fatal(err)
	}
	addr, _ := ln.LocalAddr()
	cli, err = quicsock.New(unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	if err := cli.Connect(addr); err != nil {
		t.Fatal(err)
	}
	return ln, cli
}

func TestHandshakeAndStream(t *testing.T) {
	ln, cli := pair(t)
	ccfg, scfg := tlsConfigs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	type res struct {
		s    *handshake.Session
		sock *quicsock.Socket
		err  error
	}
	srvc := make(chan res, 1)
	go func() {
		ss, _, err := ln.Accept()
		if err != nil {
			srvc <- res{err: err}
			return
		}
		sess, err := handshake.Server(ctx, ss.File(), scfg)
		srvc <- res{sess, ss, err}
	}()
	csess, err := handshake.Client(ctx, cli.File(), ccfg)
	if err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	sr := <-srvc
	if sr.err != nil {
		t.Fatalf("server handshake: %v", sr.err)
	}
	defer sr.sock.Close()
	cs := csess.ConnectionState()
	if cs.Version != tls.VersionTLS13 || cs.NegotiatedProtocol != "kq" || len(cs.PeerCertificates) == 0 {
		t.Errorf("client state: version %#x, ALPN %q, %d peer certs", cs.Version, cs.NegotiatedProtocol, len(cs.PeerCertificates))
	}
	if ss := sr.s.ConnectionState(); ss.NegotiatedProtocol != "kq" || ss.ServerName != "server.test" {
		t.Errorf("server state: ALPN %q, SNI %q", ss.NegotiatedProtocol, ss.ServerName)
	}

	// The kernel now carries stream data: open stream 0 with FIN.
	msg := []byte("hello over kernel QUIC")
	oob := quicabi.StreamInfoCmsg(-1, quicabi.MSG_QUIC_STREAM_NEW|quicabi.MSG_QUIC_STREAM_FIN)
	if _, err := cli.SendMsg(msg, oob, 0); err != nil {
		t.Fatalf("send on a new stream: %v", err)
	}
	buf := make([]byte, 100)
	roob := make([]byte, quicabi.RecvCmsgSpace)
	sr.sock.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, oobn, _, err := sr.sock.RecvMsg(buf, roob, 0)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := quicabi.ParseCmsg(roob[:oobn])
	if err != nil || !cm.HasStreamInfo {
		t.Fatalf("stream cmsg %+v, %v", cm, err)
	}
	if string(buf[:n]) != string(msg) || cm.Stream.StreamID != 0 || cm.Stream.Flags&quicabi.MSG_QUIC_STREAM_FIN == 0 {
		t.Errorf("server got %q on stream %d flags %#x; want %q on 0 with FIN", buf[:n], cm.Stream.StreamID, cm.Stream.Flags, msg)
	}
}

func TestUntrustedCertificate(t *testing.T) {
	ln, cli := pair(t)
	ccfg, scfg := tlsConfigs(t)
	ccfg.RootCAs = nil // the system roots do not know our CA
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srvErr := make(chan error, 1)
	go func() {
		ss, _, err := ln.Accept()
		if err != nil {
			srvErr <- err
			return
		}
		defer ss.Close()
		_, err = handshake.Server(ctx, ss.File(), scfg)
		srvErr <- err
	}()
	_, err := handshake.Client(ctx, cli.File(), ccfg)
	var herr *handshake.Error
	if !errors.As(err, &herr) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("client handshake with an untrusted server = %v, want a handshake.Error about the certificate", err)
	}
	cli.Close() // the server then sees the close
	if err := <-srvErr; err == nil {
		t.Error("server handshake succeeded against a client that rejected it")
	} else {
		t.Logf("server saw: %v", err)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	_, cli := pair(t) // nobody accepts: the listener queues the request, no handshake runs
	ccfg, _ := tlsConfigs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := handshake.Client(ctx, cli.File(), ccfg)
	if !errors.Is(err, handshake.ErrTimeout) {
		t.Fatalf("handshake = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("timeout took %v", d)
	}
}
