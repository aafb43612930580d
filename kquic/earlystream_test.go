//go:build linux

package kquic_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
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
// 0 and moves on to 4. kquic's OpenStream therefore reports ErrStreamLimit
// while the 0-RTT stream is open, and OpenStreamSync waits for its end.
// Against kquic's server the race rarely showed (the server answered after
// our FIN and acknowledged it with the answer); quic-go's interop server
// answers at the request's end of line, before our FIN.

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

// checkEarlyStreams opens streams after DialEarly gave c and its 0-RTT
// stream s (request req, still open) on a connection whose server answers
// every stream with the SHA-256 of its data (serveSum).
func checkEarlyStreams(t *testing.T, ctx context.Context, c *kquic.Conn, s *kquic.Stream, req []byte) {
	t.Helper()
	if s.StreamID() != 0 {
		t.Fatalf("the 0-RTT stream is %d", s.StreamID())
	}
	type opened struct {
		s   *kquic.Stream
		err error
	}
	next := make(chan opened, 1)
	s4, err := c.OpenStream()
	switch {
	case err == nil: // a module without bugEarlyStreamID
		next <- opened{s4, nil}
	case errors.Is(err, kquic.ErrStreamLimit):
		t.Logf("OpenStream with the 0-RTT stream open: %v", err)
		go func() {
			s, err := c.OpenStreamSync(ctx)
			next <- opened{s, err}
		}()
		select {
		case o := <-next:
			t.Fatalf("OpenStreamSync with the 0-RTT stream open returned %v, %v; want it to wait", o.s, o.err)
		case <-time.After(300 * time.Millisecond):
		}
	default:
		t.Fatalf("OpenStream with the 0-RTT stream open: %v", err)
	}
	// Finish stream 0: the waiting opener goes on.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sum, err := io.ReadAll(s)
	want := sha256.Sum256(req)
	if err != nil || !bytes.Equal(sum, want[:]) {
		t.Fatalf("0-RTT stream: %x, %v", sum, err)
	}
	var o opened
	select {
	case o = <-next:
	case <-ctx.Done():
		t.Fatal("OpenStreamSync still waits after the 0-RTT stream ended")
	}
	if o.err != nil {
		t.Fatalf("OpenStreamSync after the 0-RTT stream: %v", o.err)
	}
	streams := []*kquic.Stream{o.s}
	for range 2 {
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatalf("stream %d after the 0-RTT stream: %v", len(streams)+1, err)
		}
		streams = append(streams, s)
	}
	for i, s := range streams {
		if want := int64(4 * (i + 1)); s.StreamID() != want {
			t.Errorf("stream %d after the 0-RTT stream has ID %d, want %d", i+1, s.StreamID(), want)
		}
		if err := checkSum(s, byte(i), 10000); err != nil {
			t.Errorf("stream %d: %v", s.StreamID(), err)
		}
	}
	// And one while another is open, as usual.
	s1, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*kquic.Stream{s2, s1} {
		if err := checkSum(s, 9, 1000); err != nil {
			t.Errorf("stream %d: %v", s.StreamID(), err)
		}
	}
}

// TestEarlyStreamsKquic: streams after DialEarly to a kquic server.
func TestEarlyStreamsKquic(t *testing.T) {
	ctls, _ := tlsPair(t)
	ctls.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	ln := hsListen(t, &kquic.Config{Allow0RTT: true})
	ctx := ctxT(t)
	go func() {
		for {
			c, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					s, err := c.AcceptStream(ctx)
					if err != nil {
						return
					}
					go serveSum(s)
				}
			}()
		}
	}()
	earlySession(t, ctls, func() (*kquic.Conn, error) {
		return kquic.DialAddr(ctx, ln.AddrPort(), &kquic.Config{TLS: ctls})
	})
	req := []byte("early request")
	c, s, err := kquic.DialAddrEarly(ctx, ln.AddrPort(), &kquic.Config{TLS: ctls}, req)
	if err != nil {
		t.Fatalf("DialEarly: %v (server: %v)", err, hsErrors(ln))
	}
	defer c.Close()
	if !c.EarlyDataAccepted() {
		t.Error("the kquic server did not take the 0-RTT data")
	}
	checkEarlyStreams(t, ctx, c, s, req)
}

// TestEarlyStreamsQuicGo: streams after DialEarly to a quic-go server (the
// interop runner's zerortt case, kquic client against quic-go server, ran
// into bugEarlyStreamID). Over a veth pair at MTU 1400, as
// TestInteropQuicGoServer.
func TestEarlyStreamsQuicGo(t *testing.T) {
	ctls, stls := tlsPair(t)
	ctls.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	pair(t, nil, nil) // checks for the module; the pair is unused
	tp, qt, ql, drops := quicGoOverVeth(t, stls, &quic.Config{Allow0RTT: true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	var wg sync.WaitGroup
	defer func() { cancel(); ql.Close(); wg.Wait(); qt.Close(); qt.Conn.Close() }()
	early := make(chan bool, 4)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ql.Accept(ctx)
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.CloseWithError(0, "")
				go func() {
					select {
					case <-c.HandshakeComplete():
						early <- c.ConnectionState().Used0RTT
					case <-ctx.Done():
					}
				}()
				for {
					s, err := c.AcceptStream(ctx)
					if err != nil {
						return
					}
					go serveSum(s)
				}
			}()
		}
	}()
	addr := ql.Addr().String()
	cfg := &kquic.Config{TLS: ctls}
	earlySession(t, ctls, func() (c *kquic.Conn, err error) {
		err = tp.Client.Do(func() (err error) {
			c, err = kquic.Dial(ctx, "udp", addr, cfg)
			return err
		})
		if err != nil {
			interopFailure(t, fmt.Errorf("kquic dial to quic-go: %w", err), drops)
		}
		return c, err
	})
	<-early
	req := []byte("GET /f1\r\n")
	var c *kquic.Conn
	var s *kquic.Stream
	if err := tp.Client.Do(func() (err error) {
		c, s, err = kquic.DialEarly(ctx, "udp", addr, cfg, req)
		return err
	}); err != nil {
		t.Fatalf("kquic DialEarly to quic-go: %v", err)
	}
	defer c.Close()
	if !c.EarlyDataAccepted() {
		t.Error("kquic says quic-go did not take the 0-RTT data")
	}
	checkEarlyStreams(t, ctx, c, s, req)
	if !<-early {
		t.Error("quic-go says no 0-RTT was used")
	}
}
