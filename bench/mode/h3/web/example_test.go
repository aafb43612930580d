//go:build linux

package web_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"

	"kquic.dev/bench/mode/h3/web"
	"kquic.dev/internal/testcerts"
)

// The handler over HTTP/2 on crypto/tls, and a checked download from it.
func Example() {
	cert, _ := testcerts.Server()
	pool, _ := testcerts.Pool()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv, err := web.ServeH2TLS(ln, web.NewHandler(), &tls.Config{Certificates: []tls.Certificate{cert}}, web.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	c, err := web.H2TLSClient(srv.URL(), &tls.Config{RootCAs: pool, ServerName: "server.test"}, web.Config{StreamWindow: 256 << 10})
	if err != nil {
		panic(err)
	}
	c.Server = srv.Settings()
	r, err := web.Download(context.Background(), c, 10<<20)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d bytes checked, %d failed; client stream window %d, server's %d\n",
		r.Client, r.Bytes, r.Errors.Count, r.ClientSettings.StreamWindow, r.ServerSettings.StreamWindow)
	// Output: h2/crypto/tls: 10485760 bytes checked, 0 failed; client stream window 262144, server's 1048576
}
