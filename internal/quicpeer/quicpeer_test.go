package quicpeer

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"kquic.dev/internal/quicwire"
	"kquic.dev/internal/testcerts"
)

const alpn = "kq-test"

func tlsConfigs(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn}},
		&tls.Config{RootCAs: pool, ServerName: "server.test", NextProtos: []string{alpn}}
}

// quicGoEcho is a quic-go server that answers each stream with "echo:" and
// what it read, and reports how its connection ended.
func quicGoEcho(t *testing.T) (string, <-chan error) {
	t.Helper()
	stls, _ := tlsConfigs(t)
	ln, err := quic.ListenAddr("127.0.0.1:0", stls, &quic.Config{MaxIdleTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ended := make(chan error, 1)
	go func() {
		conn, err := ln.Accept(context.Background())
		if err != nil {
			ended <- err
			return
		}
		go func() {
			for {
				s, err := conn.AcceptStream(context.Background())
				if err != nil {
					return
				}
				b, _ := io.ReadAll(s)
				s.Write(append([]byte("echo:"), b...))
				s.Close()
			}
		}()
		<-conn.Context().Done()
		ended <- context.Cause(conn.Context())
	}()
	return ln.Addr().String(), ended
}

func TestClientAgainstQuicGo(t *testing.T) {
	for _, version := range []uint32{quicwire.Version1, quicwire.Version2} {
		addr, ended := quicGoEcho(t)
		_, ctls := tlsConfigs(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := Dial(ctx, addr, Config{TLS: ctls, Version: version})
		if err != nil {
			t.Fatalf("version 0x%x: %v", version, err)
		}
		if v, err := c.PeerParams().Varint(quicwire.ParamInitialMaxStreamsBidi, 0); err != nil || v == 0 {
			t.Fatalf("quic-go's initial_max_streams_bidi: %d, %v", v, err)
		}
		if err := c.Send(quicwire.OneRTT, quicwire.Stream{StreamID: 0, Data: []byte("hello"), Fin: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Poll(5*time.Second, func(Packet) bool { _, fin := c.StreamData(0); return fin }); err != nil {
			t.Fatal(err)
		}
		if got, fin := c.StreamData(0); string(got) != "echo:hello" || !fin {
			t.Fatalf("stream 0: %q (fin %v), want echo:hello", got, fin)
		}
		// A key update, then another stream: quic-go must follow it.
		c.UpdateKeys()
		if err := c.Send(quicwire.OneRTT, quicwire.Stream{StreamID: 4, Data: []byte("after update"), Fin: true}); err != nil {
			t.Fatal(err)
		}
		c.Poll(5*time.Second, func(Packet) bool { _, fin := c.StreamData(4); return fin })
		if got, _ := c.StreamData(4); string(got) != "echo:after update" {
			t.Fatalf("after the key update: %q", got)
		}
		if err := c.Close(0x42); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-ended:
			var ae *quic.ApplicationError
			if !errors.As(err, &ae) || ae.ErrorCode != 0x42 || !ae.Remote {
				t.Fatalf("quic-go's connection ended with %v, want our application error 0x42", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("quic-go did not see the CONNECTION_CLOSE")
		}
	}
}

func TestServerAgainstQuicGo(t *testing.T) {
	stls, ctls := tlsConfigs(t)
	ln, err := Listen("127.0.0.1:0", Config{TLS: stls})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		reply []byte
		err   error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := quic.DialAddr(ctx, ln.Addr().String(), ctls, &quic.Config{})
		if err != nil {
			done <- result{err: err}
			return
		}
		s, err := conn.OpenStreamSync(ctx)
		if err != nil {
			done <- result{err: err}
			return
		}
		s.Write([]byte("ping"))
		s.Close()
		b, err := io.ReadAll(s)
		conn.CloseWithError(7, "bye")
		done <- result{b, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Poll(5*time.Second, func(Packet) bool { _, fin := c.StreamData(0); return fin })
	if got, fin := c.StreamData(0); string(got) != "ping" || !fin {
		t.Fatalf("stream 0: %q, fin %v", got, fin)
	}
	if err := c.Send(quicwire.OneRTT, quicwire.Stream{StreamID: 0, Data: []byte("pong"), Fin: true}); err != nil {
		t.Fatal(err)
	}
	cc, err := c.WaitClose(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if cc == nil || !cc.App || cc.ErrorCode != 7 {
		t.Fatalf("quic-go's close: %+v, want application error 7", cc)
	}
	r := <-done
	if r.err != nil || string(r.reply) != "pong" {
		t.Fatalf("quic-go client read %q, %v", r.reply, r.err)
	}
}

// A frame quic-go must refuse gets its CONNECTION_CLOSE, decoded.
func TestViolationAnswered(t *testing.T) {
	addr, _ := quicGoEcho(t)
	_, ctls := tlsConfigs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, Config{TLS: ctls})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Abort()
	// Stream 3 is the server's first unidirectional stream: the client
	// cannot send on it (RFC 9000 §19.8).
	c.Send(quicwire.OneRTT, quicwire.Stream{StreamID: 3, Data: []byte("x")})
	cc, err := c.WaitClose(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if cc == nil || cc.App || quicwire.TransportError(cc.ErrorCode) != quicwire.StreamStateError {
		t.Fatalf("answer %+v, want STREAM_STATE_ERROR", cc)
	}
}

// quic-go asked to validate every address answers with a Retry; the
// handshake goes on with its token.
func TestRetryFromQuicGo(t *testing.T) {
	stls, ctls := tlsConfigs(t)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp, VerifySourceAddress: func(net.Addr) bool { return true }}
	defer tr.Close()
	ln, err := tr.Listen(stls, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			if _, err := ln.Accept(context.Background()); err != nil {
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, udp.LocalAddr().String(), Config{TLS: ctls})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Abort()
	retries := 0
	for _, p := range c.Packets() {
		if p.Type == quicwire.Retry {
			retries++
		}
	}
	if retries != 1 {
		t.Fatalf("%d Retry packets seen, want 1", retries)
	}
	if _, ok := c.PeerParams().Get(quicwire.ParamRetrySourceConnectionID); !ok {
		t.Fatal("quic-go's parameters lack retry_source_connection_id after a Retry")
	}
}
