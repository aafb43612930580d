//go:build linux

package kquic_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// hsListen listens on loopback with cfg (TLS from tlsPair if unset).
func hsListen(t testing.TB, cfg *kquic.Config) *kquic.Listener {
	t.Helper()
	testenv.Require(t, kmod.FeatureQUIC)
	if cfg.TLS == nil {
		_, cfg.TLS = tlsPair(t)
	}
	lg := logged(cfg)
	ln, err := kquic.Listen("udp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	register(ln, lg)
	t.Cleanup(func() { ln.Close() })
	return ln
}

// closeAccepted closes every connection ln accepts, until ln closes: for
// tests that look at a server's handshake from the client's side.
func closeAccepted(ln *kquic.Listener) {
	go func() {
		for {
			c, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// hsConnect dials addr and accepts the connection on ln.
func hsConnect(t testing.TB, ln *kquic.Listener, addr netip.AddrPort, cfg *kquic.Config) (cli, srv *kquic.Conn) {
	t.Helper()
	if cfg.TLS == nil {
		cfg.TLS, _ = tlsPair(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := kquic.DialAddr(ctx, addr, cfg)
	if err != nil {
		t.Fatalf("dial: %v (server handshake errors: %v)", err, hsErrors(ln))
	}
	t.Cleanup(func() { cli.Close() })
	srv, err = ln.Accept(ctx)
	if err != nil {
		t.Fatalf("accept: %v (handshake errors: %v)", err, hsErrors(ln))
	}
	t.Cleanup(func() { srv.Close() })
	return cli, srv
}

// echoOnce checks a round trip on a new stream: the server echoes it.
func echoOnce(t testing.TB, cli, srv *kquic.Conn, msg string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		s, err := srv.AcceptStream(ctxT(t))
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(s, s)
		if err == nil {
			err = s.Close()
		}
		done <- err
	}()
	s, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	got, err := io.ReadAll(s)
	if err != nil || string(got) != msg {
		t.Fatalf("echo = %q, %v; want %q", got, err, msg)
	}
	if err := <-done; err != nil {
		t.Fatalf("server echo: %v", err)
	}
}

// wireTap is a UDP relay between one client and a server that records the
// QUIC long-header packets passing through, by direction, version and type.
type wireTap struct {
	client *net.UDPConn // where the client sends
	up     *net.UDPConn // connected to the server
	wg     sync.WaitGroup

	mu    sync.Mutex
	peer  netip.AddrPort
	seen  map[string]int // "c>s v1 Initial", "s>c VN", ...
	first []byte         // the first datagram from the client
}

func newWireTap(t testing.TB, server netip.AddrPort) *wireTap {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	u, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(server))
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	w := &wireTap{client: c, up: u, seen: map[string]int{}}
	w.wg.Add(2)
	go func() { // client to server
		defer w.wg.Done()
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			w.mu.Lock()
			w.peer = from
			if w.first == nil {
				w.first = append([]byte(nil), buf[:n]...)
			}
			w.mu.Unlock()
			w.record("c>s", buf[:n])
			u.Write(buf[:n])
		}
	}()
	go func() { // server to client
		defer w.wg.Done()
		buf := make([]byte, 65536)
		for {
			n, err := u.Read(buf)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue // ICMP errors
			}
			w.record("s>c", buf[:n])
			w.mu.Lock()
			p := w.peer
			w.mu.Unlock()
			c.WriteToUDPAddrPort(buf[:n], p)
		}
	}()
	t.Cleanup(func() {
		c.Close()
		u.Close()
		w.wg.Wait()
	})
	return w
}

// Addr is where the client should dial.
func (w *wireTap) Addr() netip.AddrPort { return w.client.LocalAddr().(*net.UDPAddr).AddrPort() }

func (w *wireTap) count(key string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen[key]
}

func (w *wireTap) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(w.seen)
}

const quicV2 = 0x6b3343cf

// record walks the coalesced packets of a datagram (RFC 9000 §12.2).
func (w *wireTap) record(dir string, b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(b) > 0 {
		if b[0]&0x80 == 0 {
			w.seen[dir+" short"]++
			return
		}
		if len(b) < 7 {
			return
		}
		ver := binary.BigEndian.Uint32(b[1:5])
		if ver == 0 {
			w.seen[dir+" VN"]++
			return
		}
		typ := int(b[0]>>4) & 3
		names := [4]string{"Initial", "0-RTT", "Handshake", "Retry"}
		vname := "v1"
		switch ver {
		case 1:
		case quicV2: // RFC 9369 §3.2 rotates the types
			typ = (typ + 3) & 3
			vname = "v2"
		default: // the type bits are version-specific: do not guess
			w.seen[fmt.Sprintf("%s v%#x long", dir, ver)]++
			return
		}
		w.seen[dir+" "+vname+" "+names[typ]]++
		if typ == 3 {
			return
		}
		p := 5
		dcil := int(b[p])
		p += 1 + dcil
		if p >= len(b) {
			return
		}
		scil := int(b[p])
		p += 1 + scil
		if typ == 0 {
			tl, n := varint(b[min(p, len(b)):])
			if n == 0 {
				return
			}
			p += n + int(tl)
		}
		if p >= len(b) {
			return
		}
		l, n := varint(b[p:])
		if n == 0 {
			return
		}
		p += n + int(l)
		if p > len(b) {
			return
		}
		b = b[p:]
	}
}

func varint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0
	}
	v := uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n
}

// TestRetry checks that a listener with ValidatePeerAddress answers the
// first Initial with a Retry, and that the client then connects.
func TestRetry(t *testing.T) {
	ln := hsListen(t, &kquic.Config{ValidatePeerAddress: true})
	tap := newWireTap(t, ln.AddrPort())
	cli, srv := hsConnect(t, ln, tap.Addr(), &kquic.Config{})
	echoOnce(t, cli, srv, "after a Retry")
	if n := tap.count("s>c v1 Retry"); n != 1 {
		t.Errorf("the server sent %d Retry packets, want 1 (seen: %s)", n, tap.summary())
	}
	// The server also gave a NEW_TOKEN token: with it, no Retry.
	tok, err := cli.Token()
	if err != nil || len(tok) == 0 {
		t.Fatalf("token %x, %v", tok, err)
	}
	// The token is bound to the client's address, which is the tap's.
	cli2, srv2 := hsConnect(t, ln, tap.Addr(), &kquic.Config{Token: tok})
	echoOnce(t, cli2, srv2, "with a NEW_TOKEN token")
	if n := tap.count("s>c v1 Retry"); n != 1 {
		t.Errorf("a client with a NEW_TOKEN token got %d more Retry packets (seen: %s)", n-1, tap.summary())
	}
}

// TestVersion2 connects with QUIC v2 (RFC 9369) from the first packet.
func TestVersion2(t *testing.T) {
	ln := hsListen(t, &kquic.Config{})
	tap := newWireTap(t, ln.AddrPort())
	cli, srv := hsConnect(t, ln, tap.Addr(), &kquic.Config{Version: kquic.Version2})
	echoOnce(t, cli, srv, "over QUIC v2")
	if tap.count("c>s v2 Initial") == 0 || tap.count("s>c v2 Handshake") == 0 || tap.count("s>c v1 Handshake") != 0 {
		t.Errorf("want v2 Initials from the client and v2 Handshake packets from the server; seen %s", tap.summary())
	}
}

// TestVersionNegotiation starts with a version the server does not speak:
// it answers with a Version Negotiation packet and the client retries with
// a version it does.
func TestVersionNegotiation(t *testing.T) {
	ln := hsListen(t, &kquic.Config{})
	tap := newWireTap(t, ln.AddrPort())
	cli, srv := hsConnect(t, ln, tap.Addr(), &kquic.Config{Version: 5})
	echoOnce(t, cli, srv, "after version negotiation")
	if tap.count("c>s v0x5 long") == 0 || tap.count("s>c VN") == 0 {
		t.Errorf("want a version-5 Initial answered by Version Negotiation; seen %s", tap.summary())
	}
	if tap.count("s>c v1 Handshake")+tap.count("s>c v2 Handshake") == 0 {
		t.Errorf("no handshake in v1 or v2 after the negotiation; seen %s", tap.summary())
	}
	t.Logf("packets: %s", tap.summary())
}
