//go:build linux

package kquic_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

func tlsPair(t testing.TB, alpn ...string) (client, server *tls.Config) {
	t.Helper()
	if len(alpn) == 0 {
		alpn = []string{"kq"}
	}
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: pool, ServerName: "server.test", NextProtos: alpn},
		&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: alpn}
}

// pair returns a connected client and server on loopback.
func pair(t testing.TB, ccfg, scfg *kquic.Config) (client, server *kquic.Conn) {
	t.Helper()
	testenv.Require(t, kmod.FeatureQUIC)
	ctls, stls := tlsPair(t)
	if ccfg == nil {
		ccfg = &kquic.Config{}
	}
	if scfg == nil {
		scfg = &kquic.Config{}
	}
	if ccfg.TLS == nil {
		ccfg.TLS = ctls
	}
	if scfg.TLS == nil {
		scfg.TLS = stls
	}
	lg := logged(scfg)
	ln, err := kquic.Listen("udp", "127.0.0.1:0", scfg)
	if err != nil {
		t.Fatal(err)
	}
	register(ln, lg)
	t.Cleanup(func() { ln.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err = kquic.DialAddr(ctx, ln.AddrPort(), ccfg)
	if err != nil {
		t.Fatalf("dial: %v (server handshake errors: %v)", err, hsErrors(ln))
	}
	t.Cleanup(func() { client.Close() })
	server, err = ln.Accept(ctx)
	if err != nil {
		t.Fatalf("accept: %v (handshake errors: %v)", err, hsErrors(ln))
	}
	t.Cleanup(func() { server.Close() })
	return client, server
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
