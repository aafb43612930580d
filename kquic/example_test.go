//go:build linux

package kquic_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"time"

	"kquic.dev/kquic"
)

// A client that sends a request on a stream and reads the reply.
func ExampleDial() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := kquic.Dial(ctx, "udp", "server.example:4433", &kquic.Config{
		TLS:       &tls.Config{ServerName: "server.example", NextProtos: []string{"echo"}},
		Transport: kquic.TransportParameters{MaxIdleTimeout: 30 * time.Second},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	s, err := conn.OpenStreamSync(ctx)
	if err != nil {
		log.Fatal(err)
	}
	s.Write([]byte("hello"))
	s.Close() // FIN: the request is complete
	reply, err := io.ReadAll(s)
	fmt.Printf("%s %v\n", reply, err)
}

// A server that echoes every stream of every connection.
func ExampleListen() {
	cert, err := tls.LoadX509KeyPair("server.pem", "server-key.pem")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := kquic.Listen("udp", ":4433", &kquic.Config{
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"echo"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	for {
		conn, err := ln.Accept(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			for {
				s, err := conn.AcceptStream(context.Background())
				if err != nil {
					return
				}
				go func() { io.Copy(s, s); s.Close() }()
			}
		}()
	}
}
