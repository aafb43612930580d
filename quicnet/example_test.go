//go:build !kquic || !linux

// An Example cannot skip, and a kquic build may run where the kernel has no
// QUIC module, so the runnable example is built for quic-go only; the
// conformance tests run the same calls over kernel QUIC.

package quicnet_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"kquic.dev/quicnet"
)

// An echo server and a client in one program. The same code runs over
// kernel QUIC when built with -tags kquic on Linux.
func Example() {
	cert, err := tls.LoadX509KeyPair("../testdata/certs/server.pem", "../testdata/certs/server-key.pem")
	if err != nil {
		log.Fatal(err)
	}
	serverTLS := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"echo"}}
	ln, err := quicnet.Listen("udp", "127.0.0.1:0", serverTLS, &quicnet.Config{MaxIdleTimeout: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	go func() { // the server: echo every stream of every connection
		for {
			conn, err := ln.Accept(context.Background())
			if err != nil {
				return // quicnet.ErrServerClosed
			}
			go func() {
				for {
					s, err := conn.AcceptStream(context.Background())
					if err != nil {
						return // the connection ended
					}
					go func() {
						io.Copy(s, s)
						s.Close()
					}()
				}
			}()
		}
	}()

	// The client.
	ca, err := os.ReadFile("../testdata/certs/ca.pem")
	if err != nil {
		log.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := quicnet.Dial(ctx, ln.Addr().String(), &tls.Config{RootCAs: roots, NextProtos: []string{"echo"}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.CloseWithError(0, "bye")
	s, err := conn.OpenStreamSync(ctx)
	if err != nil {
		log.Fatal(err)
	}
	s.Write([]byte("hello, quicnet"))
	s.Close() // FIN: the request is complete
	reply, err := io.ReadAll(s)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (ALPN %s)\n", reply, conn.ConnectionState().TLS.NegotiatedProtocol)
	// Output: hello, quicnet (ALPN echo)
}
