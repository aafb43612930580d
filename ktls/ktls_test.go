//go:build linux

package ktls

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// stream returns n deterministic pseudo-random bytes.
func stream(seed uint64, n int64) io.Reader {
	var s [32]byte
	s[0] = byte(seed)
	return io.LimitReader(rand.NewChaCha8(s), n)
}

func digest(r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	return fmt.Sprintf("%x", h.Sum(nil)), n, err
}

// pairKind says which ends run kernel TLS.
type pairKind int

const (
	kernelClient pairKind = iota // kTLS client, crypto/tls server
	kernelServer                 // crypto/tls client, kTLS server
	kernelBoth
	userspaceBoth pairKind = -1 // for benchmarks: crypto/tls on both ends
)

func (k pairKind) String() string {
	if k == userspaceBoth {
		return "crypto-tls"
	}
	return [...]string{"ktls-client", "ktls-server", "ktls-both"}[k]
}

// dialPair connects a client and a server for suite sc; either side is a
// *Conn or a *tls.Conn according to kind.
func dialPair(t testing.TB, kind pairKind, cc, sc *tls.Config) (client, server net.Conn) {
	t.Helper()
	c, s := tcpPair(t)
	ctx := testCtx(t)
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		if kind == kernelServer || kind == kernelBoth {
			kc, err := Server(ctx, s, kconfig(sc))
			ch <- res{kc, err}
			return
		}
		tc := tls.Server(s, sc)
		ch <- res{tc, tc.HandshakeContext(ctx)}
	}()
	var cerr error
	if kind == kernelClient || kind == kernelBoth {
		var kc *Conn
		kc, cerr = Client(ctx, c, kconfig(cc))
		if kc != nil {
			client = kc
		}
	} else {
		tc := tls.Client(c, cc)
		cerr = tc.HandshakeContext(ctx)
		client = tc
	}
	r := <-ch
	if cerr != nil || r.err != nil {
		t.Fatalf("handshake: client %v; server %v", cerr, r.err)
	}
	for _, x := range []net.Conn{client, r.c} {
		if kc, ok := x.(*Conn); ok {
			checkKernel(t, kc)
			t.Cleanup(func() { kc.Close() })
		}
	}
	return client, r.c
}

// exchange sends n hashed bytes each way at once and checks them.
func exchange(t testing.TB, a, b net.Conn, n int64) {
	t.Helper()
	type res struct {
		sum string
		n   int64
		err error
	}
	recv := func(c net.Conn) chan res {
		ch := make(chan res, 1)
		go func() {
			s, m, err := digest(io.LimitReader(c, n))
			ch <- res{s, m, err}
		}()
		return ch
	}
	ra, rb := recv(a), recv(b)
	send := func(c net.Conn, seed uint64) chan error {
		ch := make(chan error, 1)
		go func() {
			_, err := io.Copy(c, stream(seed, n))
			ch <- err
		}()
		return ch
	}
	sa, sb := send(a, 1), send(b, 2)
	want1, _, _ := digest(stream(1, n))
	want2, _, _ := digest(stream(2, n))
	for _, e := range []chan error{sa, sb} {
		if err := <-e; err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	got2, got1 := <-ra, <-rb
	if got1.err != nil || got2.err != nil {
		t.Fatalf("read: %v / %v", got1.err, got2.err)
	}
	if got1.sum != want1 || got1.n != n || got2.sum != want2 || got2.n != n {
		t.Fatalf("data differs: a→b %d bytes %s (want %s), b→a %d bytes %s (want %s)", got1.n, got1.sum, want1, got2.n, got2.sum, want2)
	}
}

// expectEOF closes w and checks that r reads io.EOF.
func expectEOF(t testing.TB, w, r net.Conn) {
	t.Helper()
	w.Close()
	r.SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("after close_notify: Read = %d, %v; want io.EOF", n, err)
	}
}

func TestRoundTrip(t *testing.T) {
	requireKTLS(t)
	cases := append([]suiteCase{{"TLS13", tls.VersionTLS13, 0}}, tls12Suites...)
	for _, sc := range cases {
		for _, kind := range []pairKind{kernelClient, kernelServer, kernelBoth} {
			t.Run(sc.name+"/"+kind.String(), func(t *testing.T) {
				cc, ss := clientConfig(t, sc.version, sc.suites()...), serverConfig(t, sc.version, sc.suites()...)
				cc.ClientSessionCache = tls.NewLRUClientSessionCache(1)
				c, s := dialPair(t, kind, cc, ss)
				exchange(t, c, s, 4<<20)
				if kc, ok := c.(*Conn); ok && sc.version == tls.VersionTLS13 && kc.KernelTLS() && kc.Stats().NewSessionTickets == 0 {
					t.Errorf("kTLS client saw no NewSessionTicket")
				}
				t.Logf("%s, %s", tls.VersionName(sc.version), tls.CipherSuiteName(c.(interface {
					ConnectionState() tls.ConnectionState
				}).ConnectionState().CipherSuite))
				expectEOF(t, c, s)
			})
		}
	}
}

// TestSameSegmentFinished: the peer's Finished and its first application
// data arrive in one TCP segment; the kernel must get every data byte.
func TestSameSegmentFinished(t *testing.T) {
	requireKTLS(t)
	for _, sc := range []suiteCase{{"TLS13-server", tls.VersionTLS13, 0}, {"TLS12-client", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}} {
		t.Run(sc.name, func(t *testing.T) {
			c, s := tcpPair(t)
			ours, peerNC := net.Conn(c), net.Conn(s)
			kernelIsClient := sc.version == tls.VersionTLS12
			if !kernelIsClient {
				ours, peerNC = s, c
			}
			hold := newHoldConn(peerNC, 1)
			payload := bytes.Repeat([]byte("same segment as Finished "), 40)
			errc := make(chan error, 1)
			go func() {
				var p *tls.Conn
				if kernelIsClient {
					p = tls.Server(hold, serverConfig(t, sc.version, sc.suites()...))
				} else {
					p = tls.Client(hold, clientConfig(t, sc.version, sc.suites()...))
				}
				if err := p.Handshake(); err != nil {
					errc <- err
					return
				}
				if _, err := p.Write(payload); err != nil {
					errc <- err
					return
				}
				errc <- hold.release()
			}()
			var k *Conn
			var err error
			if kernelIsClient {
				k, err = Client(testCtx(t), ours, kconfig(clientConfig(t, sc.version, sc.suites()...)))
			} else {
				k, err = Server(testCtx(t), ours, kconfig(serverConfig(t, sc.version, sc.suites()...)))
			}
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			checkKernel(t, k)
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(payload))
			k.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.ReadFull(k, got); err != nil || !bytes.Equal(got, payload) {
				t.Fatalf("read %q, %v", got, err)
			}
		})
	}
}

func TestNewSessionTicket(t *testing.T) {
	requireKTLS(t)
	cc := clientConfig(t, tls.VersionTLS13)
	cc.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	c, s := dialPair(t, kernelClient, cc, serverConfig(t, tls.VersionTLS13))
	// A Go server sends its ticket with its Finished; a second one now.
	if err := s.(*tls.Conn).Handshake(); err != nil {
		t.Fatal(err)
	}
	exchange(t, c, s, 64<<10)
	kc := c.(*Conn)
	if kc.KernelTLS() && kc.Stats().NewSessionTickets < 1 {
		t.Fatalf("stats %+v: no ticket counted", kc.Stats())
	}
}

func TestKeyUpdate(t *testing.T) {
	requireKTLS(t)
	if testFallback() {
		t.Skip("KeyUpdate needs kernel TLS")
	}
	before, _ := ReadStats()
	c, s := dialPair(t, kernelBoth, clientConfig(t, tls.VersionTLS13), serverConfig(t, tls.VersionTLS13))
	kc, ks := c.(*Conn), s.(*Conn)
	exchange(t, kc, ks, 256<<10)
	for i := range 3 {
		if err := kc.KeyUpdate(i == 0); err != nil { // the first asks the server to update too
			t.Fatalf("KeyUpdate: %v", err)
		}
		exchange(t, kc, ks, 256<<10)
	}
	if err := ks.KeyUpdate(false); err != nil {
		t.Fatal(err)
	}
	exchange(t, kc, ks, 64<<10)
	cs, ss := kc.Stats(), ks.Stats()
	if cs.KeyUpdatesSent != 3 || ss.KeyUpdatesReceived != 3 || ss.KeyUpdatesSent != 2 || cs.KeyUpdatesReceived != 2 {
		t.Fatalf("client %+v, server %+v; want client sent 3 received 2, server sent 2 (one answer) received 3", cs, ss)
	}
	after, err := ReadStats()
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	t.Logf("tls_stat delta: TlsTxRekeyOk %d TlsRxRekeyOk %d TlsRxRekeyReceived %d", d["TlsTxRekeyOk"], d["TlsRxRekeyOk"], d["TlsRxRekeyReceived"])
	if _, ok := after["TlsTxRekeyOk"]; ok && d["TlsTxRekeyOk"] < 5 {
		t.Errorf("TlsTxRekeyOk rose by %d, want 5", d["TlsTxRekeyOk"])
	}
}

func TestAlerts(t *testing.T) {
	requireKTLS(t)
	if testFallback() {
		t.Skip("needs kernel TLS")
	}
	c, s := dialPair(t, kernelBoth, clientConfig(t, tls.VersionTLS13), serverConfig(t, tls.VersionTLS13))
	ks := s.(*Conn)
	ks.sendAlert(2, 80) // internal_error
	_, err := c.Read(make([]byte, 10))
	var ae *AlertError
	if !errors.As(err, &ae) || ae.Level != 2 || ae.Description != 80 {
		t.Fatalf("Read after a fatal alert = %v, want *AlertError{2, 80}", err)
	}
	t.Logf("alert error: %v", err)
	if _, err2 := c.Read(make([]byte, 10)); err2 != err {
		t.Fatalf("alert error not sticky: %v", err2)
	}
}

func TestBadInput(t *testing.T) {
	requireKTLS(t)
	t.Run("handshake-failure", func(t *testing.T) {
		c, s := tcpPair(t)
		go tls.Server(s, serverConfig(t, tls.VersionTLS13)).Handshake()
		cc := clientConfig(t, tls.VersionTLS13)
		cc.RootCAs = nil // does not trust the test CA
		_, err := Client(testCtx(t), c, kconfig(cc))
		if err == nil {
			t.Fatal("handshake with an untrusted certificate succeeded")
		}
		t.Logf("%v", err)
	})
	t.Run("unsupported-cipher", func(t *testing.T) {
		cbc := tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA
		for _, fallback := range []bool{false, true} {
			c, s := tcpPair(t)
			go func() {
				p := tls.Server(s, serverConfig(t, tls.VersionTLS12, cbc))
				if p.Handshake() == nil {
					p.Write([]byte("hello over CBC"))
				}
			}()
			cfg := kconfig(clientConfig(t, tls.VersionTLS12, cbc))
			cfg.Fallback = fallback
			k, err := Client(testCtx(t), c, cfg)
			if !fallback {
				if !errors.Is(err, ErrUnsupportedCipher) {
					t.Fatalf("err = %v, want ErrUnsupportedCipher", err)
				}
				t.Logf("%v", err)
				continue
			}
			if err != nil || k.KernelTLS() || !errors.Is(k.FallbackReason(), ErrUnsupportedCipher) {
				t.Fatalf("fallback: %v, kernel %v, reason %v", err, k != nil && k.KernelTLS(), k.FallbackReason())
			}
			got := make([]byte, 14)
			if _, err := io.ReadFull(k, got); err != nil || string(got) != "hello over CBC" {
				t.Fatalf("fallback read %q, %v", got, err)
			}
			k.Close()
		}
	})
	t.Run("peer-reset", func(t *testing.T) {
		c, s := dialPair(t, kernelClient, clientConfig(t, tls.VersionTLS13), serverConfig(t, tls.VersionTLS13))
		s.(*tls.Conn).NetConn().(*net.TCPConn).SetLinger(0)
		s.(*tls.Conn).NetConn().Close() // RST
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		var err error
		for err == nil {
			_, err = c.Read(make([]byte, 100))
		}
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Read after RST = %v, want a reset error", err)
		}
		t.Logf("%v", err)
	})
	t.Run("truncation", func(t *testing.T) {
		c, s := dialPair(t, kernelClient, clientConfig(t, tls.VersionTLS13), serverConfig(t, tls.VersionTLS13))
		s.(*tls.Conn).NetConn().Close() // FIN without close_notify
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		var err error
		for err == nil {
			_, err = c.Read(make([]byte, 100))
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) && !testFallback() {
			t.Fatalf("Read after FIN without close_notify = %v, want io.ErrUnexpectedEOF", err)
		}
		t.Logf("%v", err)
	})
	t.Run("corrupt-record", func(t *testing.T) {
		if testFallback() {
			t.Skip("needs kernel TLS")
		}
		c, s := dialPair(t, kernelClient, clientConfig(t, tls.VersionTLS13), serverConfig(t, tls.VersionTLS13))
		raw := s.(*tls.Conn).NetConn()
		raw.Write(append([]byte{23, 3, 3, 0, 40}, make([]byte, 40)...)) // garbage under the wrong key
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		var err error
		for err == nil {
			_, err = c.Read(make([]byte, 100))
		}
		t.Logf("%v", err)
		if err == io.EOF {
			t.Fatal("corrupt record read as EOF")
		}
	})
	t.Run("not-tcp", func(t *testing.T) {
		a, b := net.Pipe()
		defer b.Close()
		if _, err := Client(context.Background(), a, kconfig(clientConfig(t, tls.VersionTLS13))); err == nil {
			t.Fatal("net.Pipe accepted")
		}
	})
}

// TestStats reads /proc/net/tls_stat around a connection.
func TestStats(t *testing.T) {
	requireKTLS(t)
	if testFallback() {
		t.Skip("needs kernel TLS")
	}
	c, s := dialPair(t, kernelBoth, clientConfig(t, tls.VersionTLS13), serverConfig(t, tls.VersionTLS13))
	st, err := ReadStats()
	if err != nil {
		t.Fatal(err)
	}
	if st["TlsCurrTxSw"] < 2 || st["TlsCurrRxSw"] < 2 {
		t.Fatalf("tls_stat with two kTLS sockets open: %v", st)
	}
	t.Logf("tls_stat: %v", st)
	c.Close()
	s.Close()
}
