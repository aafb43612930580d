//go:build linux

package kquic_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/testenv"
	"kquic.dev/kquic"
)

// The streams a client opens after DialEarly. The 0-RTT request goes on
// stream 0 before the server's transport parameters are known; when they
// arrive, the module (quic_stream_set_param) sets the next bidirectional
// stream ID back to 0 (bugEarlyStreamID). While stream 0 is open in the
// kernel, QUIC_SOCKOPT_STREAM_OPEN then hands out 0, finds the open stream
// 0, and fails with EINVAL; once the kernel has released stream 0 (the
// peer's FIN received, ours acknowledged) it opens a second, unused stream
// 0 and moves on to 4.

// earlySession makes a first connection with dial and waits for its ticket,
// so that the next DialEarly with ctls sends 0-RTT data.
func earlySession(t *testing.T, ctls *tls.Config, dial func() (*kquic.Conn, error)) {
	t.Helper()
	c, err := dial()
	if err != nil {
		t.Fatalf("first connection: %v", err)
	}
	waitTicket(t, ctls.ClientSessionCache)
	c.Close()
}

// TestModuleBugEarlyStreamID: after DialEarly, with the 0-RTT stream 0
// still open, the kernel's next bidirectional stream is 0 again.
func TestModuleBugEarlyStreamID(t *testing.T) {
	ctls, _ := tlsPair(t)
	ctls.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	ln := hsListen(t, &kquic.Config{Allow0RTT: true})
	ctx := ctxT(t)
	earlySession(t, ctls, func() (*kquic.Conn, error) {
		cli, _ := hsConnect(t, ln, ln.AddrPort(), &kquic.Config{TLS: ctls})
		return cli, nil
	})
	c, s, err := kquic.DialAddrEarly(ctx, ln.AddrPort(), &kquic.Config{TLS: ctls}, []byte("early"))
	if err != nil {
		t.Fatalf("DialEarly: %v (server: %v)", err, hsErrors(ln))
	}
	defer c.Close()
	srv, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !c.EarlyDataAccepted() {
		t.Fatal("the server did not take the 0-RTT data: stream 0 was opened after the handshake")
	}
	// Stream 0 is open (no FIN either way): the next ID is 4.
	id, err := kquic.KernelStreamOpen(c, false)
	t.Logf("QUIC_SOCKOPT_STREAM_OPEN after 0-RTT on stream 0: ID %d, %v", id, err)
	reproduced := errors.Is(err, unix.EINVAL) || err == nil && id == 0
	if err != nil && !reproduced {
		t.Fatalf("stream open: %v", err)
	}
	if err == nil && id != 4 && !reproduced {
		t.Errorf("stream open gave ID %d, want 4", id)
	}
	s.Close()
	testenv.ModuleBug(t, bugEarlyStreamID, reproduced,
		fmt.Sprintf("with the 0-RTT stream 0 open, QUIC_SOCKOPT_STREAM_OPEN for the next bidirectional stream returned ID %d, err %v (want ID 4)", id, err))
}
