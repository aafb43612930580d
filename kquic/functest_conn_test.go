//go:build linux

package kquic_test

// The connection part of func_test.c's checklist: connection IDs,
// migration (ours and the peer's), key update, NEW_TOKEN, datagrams.

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// eventually polls cond every 20ms for up to d.
func eventually(d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func addrPort(a net.Addr) netip.AddrPort { return a.(*net.UDPAddr).AddrPort() }

// nextEvent returns the next event that match accepts, skipping others; it
// fails the test after 10s.
func nextEvent(t testing.TB, c *kquic.Conn, what string, match func(kquic.Event) bool) kquic.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var skipped []kquic.Event
	for {
		e, err := c.ReceiveEvent(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v (skipped %d events: %s)", what, err, len(skipped), describe(skipped))
		}
		if match(e) {
			return e
		}
		skipped = append(skipped, e)
	}
}

// noEvent checks that no event match accepts arrives within d.
func noEvent(t testing.TB, c *kquic.Conn, d time.Duration, what string, match func(kquic.Event) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		e, err := c.ReceiveEvent(ctx)
		if err != nil {
			return
		}
		if match(e) {
			t.Errorf("unexpected %s: %#v", what, e)
		}
	}
}

func describe(es []kquic.Event) string {
	s := ""
	for _, e := range es {
		if su, ok := e.(*kquic.StreamUpdateEvent); ok {
			s += " " + su.State.String()
			continue
		}
		s += " " + e.Type().String()
	}
	return s
}

// TestFuncConnectionIDs: retiring our (source) and the peer's (dest)
// connection IDs, and the requests the kernel refuses.
func TestFuncConnectionIDs(t *testing.T) {
	cli, _ := funcPair(t, nil, nil)
	for _, dest := range []bool{false, true} {
		want := func(step string, active, priorTo uint32) {
			t.Helper()
			var a, p uint32
			var err error
			if !eventually(3*time.Second, func() bool {
				a, p, err = cli.ConnectionIDs(dest)
				return err == nil && a == active && p == priorTo
			}) {
				t.Fatalf("dest %v, %s: active %d, prior to %d, %v; want %d, %d", dest, step, a, p, err, active, priorTo)
			}
		}
		a, p, err := cli.ConnectionIDs(dest)
		if err != nil || a != 0 || p != 0 {
			t.Fatalf("dest %v: initial active %d, prior to %d, %v; want 0, 0", dest, a, p, err)
		}
		if err := cli.RetireConnectionIDs(dest, 0, 2); err != nil {
			t.Fatal(err)
		}
		want("retire below 2", 2, 2)
		if err := cli.RetireConnectionIDs(dest, 0, 3); err != nil {
			t.Fatal(err)
		}
		want("retire below 3", 3, 3)
		for _, bad := range [][2]uint32{{5, 3}, {2, 5}, {5, 10}, {10, 5}} {
			if err := cli.RetireConnectionIDs(dest, bad[0], bad[1]); err == nil {
				t.Errorf("dest %v: RetireConnectionIDs(active %d, prior to %d) succeeded; want an error", dest, bad[0], bad[1])
			}
		}
		want("after refused requests", 3, 3)
		if err := cli.RetireConnectionIDs(dest, 8, 5); err != nil {
			t.Fatal(err)
		}
		want("retire below 5, switch to 8", 8, 5)
		if err := cli.RetireConnectionIDs(dest, 0, 11); err != nil {
			t.Fatal(err)
		}
		want("retire below 11", 11, 11)
		if got := echo(t, cli, "cid "+map[bool]string{false: "source", true: "dest"}[dest]); got == "" {
			t.Fatal("no echo after retiring connection IDs")
		}
	}
}

// TestFuncMigration: our own migration to a new port and the peer's; the
// addresses, events and connection IDs follow, and traffic keeps flowing.
func TestFuncMigration(t *testing.T) {
	ev := []kquic.EventType{kquic.EventMigration}
	cli, srv := funcPair(t, &kquic.Config{Events: ev}, nil)
	local := addrPort(cli.LocalAddr())
	destBefore, _, _ := cli.ConnectionIDs(true)
	to := netip.AddrPortFrom(local.Addr(), local.Port()+1)
	if err := cli.Migrate(to); err != nil {
		t.Fatal(err)
	}
	if got := echo(t, cli, "quic connection test14"); got != "quic connection test14" {
		t.Fatalf("echo after migrating: %q", got)
	}
	if !eventually(5*time.Second, func() bool { return addrPort(cli.LocalAddr()) == to }) {
		t.Fatalf("LocalAddr %v after migrating, want %v", cli.LocalAddr(), to)
	}
	if e := nextEvent(t, cli, "our migration event", func(e kquic.Event) bool { return e.Type() == kquic.EventMigration }); !e.(*kquic.MigrationEvent).Local {
		t.Error("MigrationEvent for our own migration has Local false")
	}
	if got := addrPort(srv.RemoteAddr()); got != to {
		t.Errorf("server sees the client at %v, want %v", got, to)
	}
	destAfter, _, _ := cli.ConnectionIDs(true)
	if destAfter <= destBefore {
		t.Errorf("dest connection ID %d after migrating, was %d: want a new one", destAfter, destBefore)
	}
	if got := echo(t, cli, "after migration"); got != "after migration" {
		t.Fatalf("echo %q", got)
	}

	// The peer migrates.
	remote := addrPort(cli.RemoteAddr())
	if got := echo(t, cli, "client migration"); got != "client migration" {
		t.Fatalf("echo %q", got)
	}
	wantRemote := netip.AddrPortFrom(remote.Addr(), remote.Port()+1)
	if !eventually(5*time.Second, func() bool {
		echo(t, cli, "ping")
		return addrPort(cli.RemoteAddr()) == wantRemote
	}) {
		t.Fatalf("RemoteAddr %v after the peer migrated, want %v", cli.RemoteAddr(), wantRemote)
	}
	if e := nextEvent(t, cli, "the peer's migration event", func(e kquic.Event) bool { return e.Type() == kquic.EventMigration }); e.(*kquic.MigrationEvent).Local {
		t.Error("MigrationEvent for the peer's migration has Local true")
	}
	if d, _, _ := cli.ConnectionIDs(true); d <= destAfter {
		t.Errorf("dest connection ID %d after the peer migrated, was %d", d, destAfter)
	}
	if got := echo(t, cli, "after peer migration"); got != "after peer migration" {
		t.Fatalf("echo %q", got)
	}
}

// TestFuncKeyUpdate: our key update (a second one at once is refused),
// traffic afterwards, and the peer's, which we see as a KeyUpdateEvent.
func TestFuncKeyUpdate(t *testing.T) {
	ev := []kquic.EventType{kquic.EventKeyUpdate}
	cli, srv := funcPair(t, &kquic.Config{Events: ev}, &kquic.Config{Events: ev})
	if err := cli.UpdateKeys(); err != nil {
		t.Fatal(err)
	}
	if err := cli.UpdateKeys(); err == nil {
		t.Error("a second UpdateKeys before the first completed succeeded")
	}
	for _, m := range []string{"quic connection test21", "quic connection test21b"} {
		if got := echo(t, cli, m); got != m {
			t.Fatalf("echo after key update: %q", got)
		}
	}
	// The server saw our update as the peer's: phase 1.
	if e := nextEvent(t, srv, "the server's key update event", func(e kquic.Event) bool { return e.Type() == kquic.EventKeyUpdate }); e.(*kquic.KeyUpdateEvent).Phase != 1 {
		t.Errorf("server: KeyUpdateEvent phase %d, want 1", e.(*kquic.KeyUpdateEvent).Phase)
	}
	noEvent(t, cli, 200*time.Millisecond, "key update event for our own update", func(e kquic.Event) bool { return e.Type() == kquic.EventKeyUpdate })

	if got := echo(t, cli, "client key_update"); got != "client key_update" {
		t.Fatalf("echo %q", got)
	}
	if got := echo(t, cli, "quic connection test22"); got != "quic connection test22" {
		t.Fatalf("echo after the peer's key update: %q", got)
	}
	if e := nextEvent(t, cli, "the peer's key update event", func(e kquic.Event) bool { return e.Type() == kquic.EventKeyUpdate }); e.(*kquic.KeyUpdateEvent).Phase != 0 {
		t.Errorf("KeyUpdateEvent phase %d, want 0", e.(*kquic.KeyUpdateEvent).Phase)
	}
}

// TestFuncNewToken: the server's NEW_TOKEN reaches the client (Token and a
// NewTokenEvent) and works for a later connection; clients cannot send one.
func TestFuncNewToken(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	ctls, stls := tlsPair(t)
	ln, err := kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{TLS: stls})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ccfg := &kquic.Config{TLS: ctls, Events: []kquic.EventType{kquic.EventNewToken}}
	cli, err := kquic.DialAddr(ctxT(t), ln.AddrPort(), ccfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	srv, err := ln.Accept(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	funcServer(t, srv)

	var tok []byte
	if !eventually(5*time.Second, func() bool { tok, err = cli.Token(); return err == nil && len(tok) > 0 }) {
		t.Fatalf("Token() = %x, %v after the handshake; want the server's NEW_TOKEN", tok, err)
	}
	if got := echo(t, cli, "client new_token"); got != "client new_token" {
		t.Fatalf("echo %q", got)
	}
	e := nextEvent(t, cli, "NewTokenEvent", func(e kquic.Event) bool { return e.Type() == kquic.EventNewToken })
	if len(e.(*kquic.NewTokenEvent).Token) == 0 {
		t.Error("NewTokenEvent with an empty token")
	}
	if err := cli.SendNewToken(); err == nil {
		t.Error("SendNewToken on a client succeeded")
	}
	if _, err := srv.Token(); err == nil {
		t.Error("Token on a server succeeded")
	}
	// The token works for the next connection to the same listener.
	tok, _ = cli.Token()
	c2, err := kquic.DialAddr(ctxT(t), ln.AddrPort(), &kquic.Config{TLS: ctls, Token: tok})
	if err != nil {
		t.Fatalf("dial with the token: %v", err)
	}
	c2.Close()
}

// TestFuncDatagram: datagrams both ways, a too-large one refused with a
// *DatagramTooLargeError, and ErrDatagramsDisabled without the peer's
// consent.
func TestFuncDatagram(t *testing.T) {
	tp := kquic.TransportParameters{MaxDatagramFrameSize: 1400}
	cli, _ := funcPair(t, &kquic.Config{Transport: tp}, &kquic.Config{Transport: tp})
	if p, err := cli.PeerTransportParameters(); err != nil || p.MaxDatagramFrameSize != 1400 {
		t.Fatalf("peer max_datagram_frame_size %d, %v", p.MaxDatagramFrameSize, err)
	}
	if err := cli.SendDatagram([]byte("client datagram")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := cli.ReceiveDatagram(ctx)
	if err != nil || string(d) != "client datagram" {
		t.Fatalf("datagram echo %q, %v", d, err)
	}
	var tl *kquic.DatagramTooLargeError
	if err := cli.SendDatagram(make([]byte, 4097)); !errors.As(err, &tl) || tl.Size != 4097 || tl.Max <= 0 || tl.Max >= 1400 {
		t.Errorf("4097-byte datagram: %v (%+v); want a DatagramTooLargeError with Max under 1400", err, tl)
	} else if err := cli.SendDatagram(make([]byte, tl.Max)); err != nil {
		// Max is a size that fits.
		t.Errorf("datagram of the reported maximum %d: %v", tl.Max, err)
	}
	if err := cli.SendDatagram(make([]byte, 1400)); !errors.As(err, &tl) {
		t.Errorf("1400-byte datagram (the peer's frame limit, with no room for headers): %v, want DatagramTooLargeError", err)
	}
	if err := cli.SendDatagram(nil); err == nil {
		t.Error("empty datagram accepted")
	}

	// A peer that did not ask for datagrams.
	c2, _ := pair(t, &kquic.Config{Transport: tp}, nil)
	if err := c2.SendDatagram([]byte("x")); !errors.Is(err, kquic.ErrDatagramsDisabled) {
		t.Errorf("datagram to a peer without datagrams: %v, want ErrDatagramsDisabled", err)
	}
}
