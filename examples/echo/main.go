// Command echo is a QUIC echo server and client written with package
// kquic.dev/quicnet: one binary runs over the Linux kernel's QUIC module
// where it is loaded and over quic-go elsewhere (QUICNET_IMPLEMENTATION=
// kquic or quic-go chooses), and says which.
//
// From the repository's root (the certificates are the tests' own; the
// server's is valid for server.test, 127.0.0.1 and ::1):
//
//	go run ./examples/echo -listen 127.0.0.1:4433 &
//	go run ./examples/echo -dial 127.0.0.1:4433 hello world
//
// To require kernel QUIC, without quic-go in the binary:
//
//	go run -tags kquic ./examples/echo -listen 127.0.0.1:4433
//
// The client sends each argument on a stream of its own and prints what
// comes back; the server sends every stream back as it arrives.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"kquic.dev/quicnet"
)

const alpn = "quicnet-echo"

func main() {
	listen := flag.String("listen", "", "serve on this address (host:port)")
	dial := flag.String("dial", "", "connect to this server (host:port) and echo the arguments")
	certFile := flag.String("cert", "testdata/certs/server.pem", "server certificate")
	keyFile := flag.String("key", "testdata/certs/server-key.pem", "server key")
	caFile := flag.String("ca", "testdata/certs/ca.pem", "CA that signed the server's certificate")
	flag.Parse()
	log.SetFlags(0)
	switch {
	case *listen != "":
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			log.Fatal(err)
		}
		log.Fatal(serve(*listen, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn}}))
	case *dial != "":
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			log.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		if err := client(*dial, &tls.Config{RootCAs: roots, NextProtos: []string{alpn}}, flag.Args()); err != nil {
			log.Fatal(err)
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
}

func serve(addr string, tlsConf *tls.Config) error {
	ln, err := quicnet.Listen("udp", addr, tlsConf, &quicnet.Config{MaxIdleTimeout: time.Minute})
	if err != nil {
		return err
	}
	defer ln.Close()
	log.Printf("echo server on %v (%s)", ln.Addr(), ln.Implementation())
	for {
		conn, err := ln.Accept(context.Background())
		if err != nil {
			return err
		}
		go func() {
			log.Printf("%v: connected", conn.RemoteAddr())
			for {
				s, err := conn.AcceptStream(context.Background())
				if err != nil {
					log.Printf("%v: %v", conn.RemoteAddr(), err) // why it ended
					return
				}
				go func() {
					io.Copy(s, s)
					s.Close()
				}()
			}
		}()
	}
}

func client(addr string, tlsConf *tls.Config, msgs []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := quicnet.Dial(ctx, addr, tlsConf, nil)
	if err != nil {
		return err
	}
	defer conn.CloseWithError(0, "done")
	fmt.Printf("connected to %v over %s, ALPN %q\n", conn.RemoteAddr(), conn.Implementation(), conn.ConnectionState().TLS.NegotiatedProtocol)
	for _, msg := range msgs {
		s, err := conn.OpenStreamSync(ctx)
		if err != nil {
			return err
		}
		s.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := s.Write([]byte(msg)); err != nil {
			return err
		}
		s.Close() // FIN: the server echoes up to here
		reply, err := io.ReadAll(s)
		var se *quicnet.StreamError
		if errors.As(err, &se) {
			return fmt.Errorf("the server reset stream %d with code %d", se.StreamID, se.ErrorCode)
		}
		if err != nil {
			return err
		}
		fmt.Printf("stream %d: %s\n", s.StreamID(), reply)
	}
	return nil
}
