//go:build linux

package kquic_test

import (
	"context"
	"crypto/tls"
	"io"
	"testing"
	"time"

	"kquic.dev/kquic"
)

// waitTicket waits until the client's session cache has a session for
// server.test: the server's ticket arrives after the handshake.
func waitTicket(t testing.TB, cache tls.ClientSessionCache) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s, ok := cache.Get("server.test"); ok && s != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no session ticket reached the client's session cache within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSessionResumption(t *testing.T) {
	ctls, _ := tlsPair(t)
	ctls.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	ln := hsListen(t, &kquic.Config{})

	cli, srv := hsConnect(t, ln, ln.AddrPort(), &kquic.Config{TLS: ctls})
	if cli.ConnectionState().DidResume {
		t.Fatal("the first connection resumed")
	}
	echoOnce(t, cli, srv, "first")
	waitTicket(t, ctls.ClientSessionCache)
	cli.Close()

	cli2, srv2 := hsConnect(t, ln, ln.AddrPort(), &kquic.Config{TLS: ctls})
	if !cli2.ConnectionState().DidResume || !srv2.ConnectionState().DidResume {
		t.Fatalf("second connection: client DidResume %v, server %v; want both true", cli2.ConnectionState().DidResume, srv2.ConnectionState().DidResume)
	}
	if cli2.EarlyDataAccepted() || srv2.EarlyDataAccepted() {
		t.Error("0-RTT reported on a plain Dial")
	}
	echoOnce(t, cli2, srv2, "resumed")
}

// zeroRTT runs a first connection that gets a ticket, then DialEarly with a
// request, and returns what each side says about early data and the
// server's view of the request.
// With otherServer, the second connection goes to another listener, whose
// ticket keys differ: it cannot resume and rejects the 0-RTT data.
func zeroRTT(t *testing.T, allow, otherServer bool) (cliEarly, srvEarly bool, tap *wireTap) {
	ctls, _ := tlsPair(t)
	ctls.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	ln := hsListen(t, &kquic.Config{Allow0RTT: allow})

	cli, srv := hsConnect(t, ln, ln.AddrPort(), &kquic.Config{TLS: ctls})
	echoOnce(t, cli, srv, "first")
	waitTicket(t, ctls.ClientSessionCache)
	cli.Close()
	if otherServer {
		ln = hsListen(t, &kquic.Config{Allow0RTT: allow})
	}

	tap = newWireTap(t, ln.AddrPort())
	req := []byte("GET /early (sent as 0-RTT)")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c2, s, err := kquic.DialAddrEarly(ctx, tap.Addr(), &kquic.Config{TLS: ctls}, req)
	if err != nil {
		t.Fatalf("DialEarly: %v (server: %v)", err, hsErrors(ln))
	}
	defer c2.Close()
	if c2.ConnectionState().DidResume == otherServer {
		t.Errorf("DialEarly resumed: %v, want %v", !otherServer, otherServer)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	srv2, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Close()
	ss, err := srv2.AcceptStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(ss)
	if err != nil || string(got) != string(req) {
		t.Fatalf("server read %q, %v; want %q", got, err, req)
	}
	if _, err := ss.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	ss.Close()
	rep, err := io.ReadAll(s)
	if err != nil || string(rep) != "reply" {
		t.Fatalf("client read %q, %v", rep, err)
	}
	// The next stream is 4, not the early stream's 0 again, and works.
	s4, err := c2.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if s4.StreamID() != 4 {
		t.Errorf("the stream opened after the early one is %d, want 4", s4.StreamID())
	}
	if _, err := s4.Write([]byte("next")); err != nil {
		t.Fatal(err)
	}
	s4.Close()
	ss4, err := srv2.AcceptStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(ss4); err != nil || string(got) != "next" || ss4.StreamID() != 4 {
		t.Fatalf("server read %q, %v on stream %d; want %q on 4", got, err, ss4.StreamID(), "next")
	}
	return c2.EarlyDataAccepted(), srv2.EarlyDataAccepted(), tap
}

// TestZeroRTT sends a request in 0-RTT packets on a resumed connection: the
// server reads it, both sides report early data, and the wire carried
// 0-RTT packets.
func TestZeroRTT(t *testing.T) {
	cliEarly, srvEarly, tap := zeroRTT(t, true, false)
	if !cliEarly || !srvEarly {
		t.Errorf("early data accepted: client %v, server %v; want both", cliEarly, srvEarly)
	}
	if tap.count("c>s v1 0-RTT") == 0 {
		t.Errorf("no 0-RTT packet on the wire: %s", tap.summary())
	}
	t.Logf("packets: %s", tap.summary())
}

// TestZeroRTTNotAllowed: tickets that do not allow early data make
// DialEarly send the data after the handshake, and say so.
func TestZeroRTTNotAllowed(t *testing.T) {
	cliEarly, srvEarly, tap := zeroRTT(t, false, false)
	if cliEarly || srvEarly {
		t.Errorf("early data accepted: client %v, server %v; want neither", cliEarly, srvEarly)
	}
	if n := tap.count("c>s v1 0-RTT"); n != 0 {
		t.Errorf("%d 0-RTT packets on the wire: %s", n, tap.summary())
	}
}

// TestZeroRTTRejected: a server that cannot resume the session rejects the
// 0-RTT data; the kernel sends it again in 1-RTT packets and the server
// still reads the request.
func TestZeroRTTRejected(t *testing.T) {
	cliEarly, srvEarly, tap := zeroRTT(t, true, true)
	if cliEarly || srvEarly {
		t.Errorf("early data accepted: client %v, server %v; want neither", cliEarly, srvEarly)
	}
	if tap.count("c>s v1 0-RTT") == 0 {
		t.Errorf("the client sent no 0-RTT packet: %s", tap.summary())
	}
}
