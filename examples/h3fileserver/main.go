// Command h3fileserver serves a directory with http.FileServer over HTTP/3
// and fetches files from such a server: written with package
// kquic.dev/quicnet/http3, one binary runs over the Linux kernel's QUIC
// module where it is loaded and over quic-go elsewhere. It is the HTTP/3
// sibling of examples/fileserver.
//
// From the repository's root (the certificates are the tests' own):
//
//	go run ./examples/h3fileserver -listen 127.0.0.1:4433 -dir . &
//	go run ./examples/h3fileserver -get https://127.0.0.1:4433/go.mod
//	curl --http3-only -k https://127.0.0.1:4433/   # any HTTP/3 client
//
// With -alt-svc the server also serves HTTPS over TCP on the same port
// number, announcing HTTP/3 in Alt-Svc, as a browser-facing deployment
// does. QUICNET_IMPLEMENTATION=kquic or quic-go chooses the QUIC
// implementation; -tags kquic builds for kernel QUIC alone.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

func main() {
	listen := flag.String("listen", "", "serve on this address (host:port, UDP; TCP too with -alt-svc)")
	dir := flag.String("dir", ".", "directory to serve")
	altSvc := flag.Bool("alt-svc", false, "also serve HTTPS over TCP on the same address, announcing HTTP/3")
	get := flag.String("get", "", "fetch this URL over HTTP/3 and write it to stdout")
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
		tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}}
		srv := newServer(*dir, tlsConf)
		ln, err := quicnet.Listen("udp", *listen, http3.ConfigureTLSConfig(tlsConf), nil)
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("serving %s over HTTP/3 on %v (%s)", *dir, ln.Addr(), ln.Implementation())
		if *altSvc {
			go func() { log.Fatal(serveTCP(*listen, tlsConf, srv)) }()
		}
		log.Fatal(srv.ServeListener(ln))
	case *get != "":
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			log.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		c := &http.Client{Transport: &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}, Timeout: time.Minute}
		if err := fetch(c, *get, os.Stdout); err != nil {
			log.Fatal(err)
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
}

// newServer is the HTTP/3 server of dir's files.
func newServer(dir string, tlsConf *tls.Config) *http3.Server {
	return &http3.Server{
		Handler:           http.FileServer(http.Dir(dir)),
		TLSConfig:         tlsConf,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
	}
}

// serveTCP serves the same handler over HTTPS (HTTP/1.1 and HTTP/2) on
// addr, each response announcing HTTP/3 on the UDP port of the same
// number.
func serveTCP(addr string, tlsConf *tls.Config, srv *http3.Server) error {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := net.LookupPort("tcp", p)
	if err != nil {
		return err
	}
	ts := &http.Server{Addr: addr, Handler: http3.AltSvcHandler(srv.Handler, port), TLSConfig: tlsConf, ReadHeaderTimeout: 10 * time.Second}
	return ts.ListenAndServeTLS("", "")
}

// fetch GETs url and copies the body to w.
func fetch(c *http.Client, url string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}
