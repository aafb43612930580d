package interop

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

// TestTraceLoneFIN: the trace tells a request stream whose FIN reached the
// server alone, in a STREAM frame without data, and that the server never
// answered (UnansweredLoneFINs, the sign of http3_test's dropped FIN), from
// one the server answered. quic-go's client sends stream 0's request, waits
// until the server has read it (a byte on the server's stream), and only
// then closes it: the FIN goes alone. Stream 4 is answered.
func TestTraceLoneFIN(t *testing.T) {
	cs, err := newCerts(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	keys := &KeyLog{}
	ln, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cs.server}, NextProtos: []string{"lonefin"}}, quicGoConfig(false))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			served <- err
			return
		}
		s0, err := c.AcceptStream(ctx)
		if err != nil {
			served <- err
			return
		}
		if _, err := io.ReadFull(s0, make([]byte, 3)); err != nil {
			served <- err
			return
		}
		u, err := c.OpenUniStream()
		if err == nil {
			_, err = u.Write([]byte("r")) // "I read your request"
		}
		if err == nil {
			_, err = io.ReadAll(s0) // its FIN, alone
		}
		if err != nil {
			served <- err
			return
		}
		s4, err := c.AcceptStream(ctx)
		if err == nil {
			_, err = io.ReadAll(s4)
		}
		if err == nil {
			_, err = s4.Write([]byte("answer"))
		}
		if err == nil {
			err = s4.Close()
		}
		served <- err
		<-c.Context().Done()
	}()
	relay, err := NewRelay(ln.Addr().(*net.UDPAddr), Impairment{})
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	c, err := quic.DialAddr(ctx, relay.Addr().String(), &tls.Config{RootCAs: cs.pool, ServerName: "server", NextProtos: []string{"lonefin"}, KeyLogWriter: keys}, quicGoConfig(false))
	if err != nil {
		t.Fatal(err)
	}
	s0, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s0.Write([]byte("GET")); err != nil {
		t.Fatal(err)
	}
	u, err := c.AcceptUniStream(ctx)
	if err == nil {
		_, err = io.ReadFull(u, make([]byte, 1))
	}
	if err != nil {
		t.Fatal(err)
	}
	s0.Close()
	s4, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s4.Write([]byte("GET"))
	s4.Close()
	if b, err := io.ReadAll(s4); err != nil || string(b) != "answer" {
		t.Fatalf("stream 4: %q, %v", b, err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	c.CloseWithError(0, "")
	relay.Close()
	tr := Analyze(relay.Records(), keys)
	if len(tr.Conns) != 1 {
		t.Fatalf("%d connections in the trace, want 1", len(tr.Conns))
	}
	conn := tr.Conns[0]
	if !conn.LoneFIN[ToServer][0] {
		t.Errorf("stream 0's FIN, sent after its data was read, not seen alone: lone FINs to the server %v", conn.LoneFIN[ToServer])
	}
	if got := conn.UnansweredLoneFINs(); !slices.Equal(got, []uint64{0}) {
		t.Errorf("unanswered lone FINs %v, want [0] (stream 4 was answered)", got)
	}
	if !conn.Answered[ToClient][4] || conn.Answered[ToClient][0] {
		t.Errorf("streams answered %v, want 4 and not 0", conn.Answered[ToClient])
	}
}
