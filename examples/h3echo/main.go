// Command h3echo is an HTTP/3 echo server and client written with package
// kquic.dev/quicnet/http3 (the HTTP/3 sibling of examples/echo): the server
// sends each POST body back as it arrives, the client POSTs each argument
// and prints the answer. One binary runs over the Linux kernel's QUIC
// module where it is loaded and over quic-go elsewhere
// (QUICNET_IMPLEMENTATION=kquic or quic-go chooses).
//
// From the repository's root (the certificates are the tests' own):
//
//	go run ./examples/h3echo -listen 127.0.0.1:4433 &
//	go run ./examples/h3echo -dial 127.0.0.1:4433 hello world
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

func main() {
	listen := flag.String("listen", "", "serve on this address (host:port)")
	dial := flag.String("dial", "", "send the arguments to this server (host:port)")
	certFile := flag.String("cert", "testdata/certs/server.pem", "server certificate")
	keyFile := flag.String("key", "testdata/certs/server-key.pem", "server key")
	caFile := flag.String("ca", "testdata/certs/ca.pem", "CA that signed the server's certificate")
	flag.Parse()
	log.SetFlags(0)
	switch {
	case *listen != "":
		srv := &http3.Server{Addr: *listen, Handler: echoHandler()}
		log.Printf("echoing over HTTP/3 on %s (%s)", *listen, quicnet.Implementation())
		log.Fatal(srv.ListenAndServeTLS(*certFile, *keyFile))
	case *dial != "":
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			log.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
		defer tr.Close()
		c := &http.Client{Transport: tr}
		for _, m := range flag.Args() {
			got, err := echo(c, "https://"+*dial+"/", m)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println(got)
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
}

// echoHandler sends the request body back as it arrives (HTTP/3 is full
// duplex: the handler writes while the client still sends).
func echoHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST a body to have it echoed", http.StatusMethodNotAllowed)
			return
		}
		rc := http.NewResponseController(w)
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				rc.Flush()
			}
			if err != nil {
				return
			}
		}
	})
}

// echo POSTs msg to url and returns the answer.
func echo(c *http.Client, url, msg string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(msg))
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	return string(b), nil
}
