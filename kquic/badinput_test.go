//go:build linux

package kquic_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/handshake"
	"kquic.dev/internal/quicpeer"
	"kquic.dev/internal/quicsock"
	"kquic.dev/internal/quicwire"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// wantErr checks that err is a non-nil error whose text has every one of
// the words.
func wantErr(t *testing.T, what string, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", what, err, w)
		}
	}
	t.Logf("%s: %v", what, err)
}

// freePort returns a loopback UDP port nobody listens on.
func freePort(t *testing.T) netip.AddrPort {
	u, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	return u.LocalAddr().(*net.UDPAddr).AddrPort()
}

func TestDialNoListener(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	ctls, _ := tlsPair(t)
	start := time.Now()
	_, err := kquic.DialAddr(context.Background(), freePort(t), &kquic.Config{TLS: ctls, HandshakeTimeout: time.Second})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("dial took %v with a 1s HandshakeTimeout", d)
	}
	wantErr(t, "dial without a listener", err, "no answer", "within", "ALPN")
	var herr *handshake.Error
	var nerr net.Error
	if !errors.As(err, &herr) || !errors.Is(err, handshake.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &nerr) || !nerr.Timeout() {
		t.Errorf("error %T: want a *handshake.Error wrapping ErrTimeout and context.DeadlineExceeded, with Timeout() true", err)
	}
}

func TestDialUntrustedCertificate(t *testing.T) {
	ln := hsListen(t, &kquic.Config{})
	ctls, _ := tlsPair(t)
	ctls.RootCAs = x509.NewCertPool() // trusts nothing
	_, err := kquic.DialAddr(context.Background(), ln.AddrPort(), &kquic.Config{TLS: ctls, HandshakeTimeout: 5 * time.Second})
	wantErr(t, "untrusted certificate", err, "certificate")
	var cverr *tls.CertificateVerificationError
	var herr *handshake.Error
	if !errors.As(err, &cverr) || !errors.As(err, &herr) {
		t.Errorf("error %T: want a *handshake.Error wrapping a *tls.CertificateVerificationError", err)
	}
}

func TestDialALPNMismatch(t *testing.T) {
	ln := hsListen(t, &kquic.Config{}) // serves "kq"
	ctls, _ := tlsPair(t, "h3")
	_, err := kquic.DialAddr(context.Background(), ln.AddrPort(), &kquic.Config{TLS: ctls, HandshakeTimeout: 2 * time.Second})
	wantErr(t, "ALPN mismatch", err, "may not support our ALPN", `"h3"`)
	if !errors.Is(err, handshake.ErrTimeout) {
		t.Errorf("error %T: want ErrTimeout (the listener drops the ClientHello silently)", err)
	}
}

// TestDialPeerClosesMidHandshake: a server that accepts the connection and
// closes it before answering.
func TestDialPeerClosesMidHandshake(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	ls, err := quicsock.New(unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	if err := ls.Bind(netip.MustParseAddrPort("127.0.0.1:0")); err != nil {
		t.Fatal(err)
	}
	if err := ls.Listen(4); err != nil {
		t.Fatal(err)
	}
	addr, _ := ls.LocalAddr()
	go func() {
		s, _, err := ls.Accept()
		if err == nil {
			s.Close() // in ESTABLISHING: the kernel sends CONNECTION_CLOSE
		}
	}()
	ctls, _ := tlsPair(t)
	_, err = kquic.DialAddr(context.Background(), addr, &kquic.Config{TLS: ctls, HandshakeTimeout: 5 * time.Second})
	wantErr(t, "peer closes mid-handshake", err, "peer closed the connection during the handshake")
	var perr *handshake.PeerClosedError
	if !errors.As(err, &perr) {
		t.Errorf("error %T: want a *handshake.PeerClosedError", err)
	}
}

// TestDialKernelClosesMidHandshake: a server whose first Initial carries a
// STREAM frame, which RFC 9000 §12.4 forbids there: the client's kernel
// closes the connection with PROTOCOL_VIOLATION itself, and the dial's
// error says our kernel closed, not the peer (the close record still holds
// the handshake's phrase), while the server saw the kernel's
// CONNECTION_CLOSE carrying that phrase.
func TestDialKernelClosesMidHandshake(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	ctls, stls := tlsPair(t)
	ln, err := quicpeer.Listen("127.0.0.1:0", quicpeer.Config{TLS: stls, HandshakeFrames: map[quicwire.PacketType][]quicwire.Frame{
		quicwire.Initial: {quicwire.Stream{StreamID: 1, Data: []byte("x")}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err == nil {
			c.Close(0)
		}
		served <- err
	}()
	_, err = kquic.DialAddr(ctx, ln.Addr().AddrPort(), &kquic.Config{TLS: ctls, HandshakeTimeout: 10 * time.Second})
	wantErr(t, "the kernel closes mid-handshake", err, "our kernel closed the connection during the handshake (code 0xa PROTOCOL_VIOLATION", "not the peer")
	var lerr *handshake.LocalCloseError
	var perr *handshake.PeerClosedError
	if !errors.As(err, &lerr) || errors.As(err, &perr) {
		t.Errorf("error %T: want a *handshake.LocalCloseError and no *handshake.PeerClosedError", err)
	}
	serr := <-served
	var pc *quicpeer.PeerClosedError
	if !errors.As(serr, &pc) || pc.Close.ErrorCode != uint64(quicwire.ProtocolViolation) || !strings.HasPrefix(string(pc.Close.Reason), handshake.CloseMarkerPrefix) {
		t.Errorf("the server's handshake ended with %v, want the client kernel's PROTOCOL_VIOLATION with the handshake's phrase", serr)
	}
}

// TestServerHandshakeTimeout: a client that stops in the middle of the
// handshake makes the listener's handshake fail after its timeout.
func TestServerHandshakeTimeout(t *testing.T) {
	ln := hsListen(t, &kquic.Config{HandshakeTimeout: time.Second})
	ctls, _ := tlsPair(t)
	ctls.VerifyConnection = func(tls.ConnectionState) error {
		time.Sleep(3 * time.Second) // stall after the server's flight
		return nil
	}
	_, err := kquic.DialAddr(context.Background(), ln.AddrPort(), &kquic.Config{TLS: ctls, HandshakeTimeout: 5 * time.Second})
	if err == nil {
		t.Log("the client completed its handshake after the server gave up")
	}
	errs := hsErrors(ln)
	if len(errs) == 0 {
		t.Fatal("the listener reports no failed handshake")
	}
	wantErr(t, "server handshake timeout", errs[0], "client did not complete the handshake within")
	if !errors.Is(errs[0], handshake.ErrTimeout) {
		t.Errorf("error %T: want ErrTimeout", errs[0])
	}
}

func TestInvalidStreamOperations(t *testing.T) {
	cli, srv := pair(t, nil, nil)
	// Reading our own unidirectional stream, or writing the peer's, does
	// not compile: OpenUniStream gives a *SendStream, AcceptUniStream a
	// *ReceiveStream (TestUniStreamTypes). The peer's end reads.
	u, err := cli.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.WriteAndClose([]byte("x")); err != nil {
		t.Fatal(err)
	}
	su, err := srv.AcceptUniStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	su.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(su); string(b) != "x" || err != nil {
		t.Fatalf("read of the peer's unidirectional stream: %q, %v", b, err)
	}

	// Writing after Close (FIN).
	s, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = s.Write([]byte("more"))
	wantErr(t, "write after FIN", err, "after Close")
}

// TestGarbageDatagrams: random UDP datagrams - short, long, shaped like
// long-header packets - sent to the port a listener and its connection
// share do not end the connection, which goes on both ways.
func TestGarbageDatagrams(t *testing.T) {
	cli, _ := funcPair(t, nil, nil)
	dst := cli.RemoteAddr().(*net.UDPAddr)
	u, err := net.DialUDP("udp", nil, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		b := make([]byte, 1+rnd.IntN(1400))
		for j := range b {
			b[j] = byte(rnd.Uint32())
		}
		if i%3 == 0 && len(b) > 5 {
			b[0] = 0xc0 | b[0]&0x0f          // a long header
			copy(b[1:5], []byte{0, 0, 0, 1}) // version 1
		}
		u.Write(b)
	}
	if got := echo(t, cli, "after garbage"); got != "after garbage" {
		t.Fatalf("echo after garbage = %q", got)
	}
	if err := cli.Err(); err != nil {
		t.Fatalf("the connection ended: %v", err)
	}
}
