// Command fileserver serves the files of a directory over QUIC, one stream
// per file, and fetches them: written with package kquic.dev/quicnet, it
// runs over the Linux kernel's QUIC module where it is loaded and over
// quic-go elsewhere.
//
// The protocol: the client opens a bidirectional stream, sends
// "GET <path>\n" and FIN; the server answers with the file's bytes and FIN,
// or resets the stream with code 1 (no such file) or 2 (bad request).
//
// From the repository's root (the certificates are the tests' own):
//
//	go run ./examples/fileserver -listen 127.0.0.1:4433 -dir . &
//	go run ./examples/fileserver -dial 127.0.0.1:4433 -out /tmp/got go.mod README.md
//	go run ./examples/fileserver -dial 127.0.0.1:4433 -conns 4 go.mod go.sum README.md Makefile
//
// QUICNET_IMPLEMENTATION=kquic or quic-go chooses. The client fetches
// the files over -conns connections (round robin), at most -parallel
// streams at a time on each, and prints the throughput.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"kquic.dev/quicnet"
)

const alpn = "quicnet-files"

// The codes a server resets a stream with.
const (
	codeNotFound   quicnet.StreamErrorCode = 1
	codeBadRequest quicnet.StreamErrorCode = 2
)

func main() {
	listen := flag.String("listen", "", "serve on this address (host:port)")
	dir := flag.String("dir", ".", "directory to serve")
	dial := flag.String("dial", "", "fetch the files named as arguments from this server (host:port)")
	conns := flag.Int("conns", 1, "connections to fetch over")
	parallel := flag.Int("parallel", 16, "streams at a time on each connection")
	out := flag.String("out", "", "directory to save the files in (default: count the bytes only)")
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
		root, err := os.OpenRoot(*dir)
		if err != nil {
			log.Fatal(err)
		}
		ln, err := quicnet.Listen("udp", *listen, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn}}, nil)
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("serving %s on %v (%s)", *dir, ln.Addr(), ln.Implementation())
		log.Fatal(serve(ln, root))
	case *dial != "":
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			log.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		tlsConf := &tls.Config{RootCAs: roots, NextProtos: []string{alpn}}
		if err := client(*dial, tlsConf, flag.Args(), *conns, *parallel, *out); err != nil {
			log.Fatal(err)
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
}

// serve answers the requests of every connection ln accepts, until ln is
// closed.
func serve(ln *quicnet.Listener, root *os.Root) error {
	for {
		conn, err := ln.Accept(context.Background())
		if err != nil {
			return err
		}
		go func() {
			for {
				s, err := conn.AcceptStream(context.Background())
				if err != nil {
					return // the connection ended
				}
				go serveStream(s, root)
			}
		}()
	}
}

// serveStream answers one request.
func serveStream(s *quicnet.Stream, root *os.Root) {
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	req, err := io.ReadAll(io.LimitReader(s, 4096)) // up to the client's FIN
	path, ok := strings.CutPrefix(string(req), "GET ")
	path, nl := strings.CutSuffix(path, "\n")
	if err != nil || !ok || !nl {
		s.CancelRead(codeBadRequest)
		s.CancelWrite(codeBadRequest)
		return
	}
	f, err := root.Open(strings.TrimPrefix(path, "/")) // os.Root keeps it inside the directory
	if err == nil {
		defer f.Close()
		var st os.FileInfo
		if st, err = f.Stat(); err == nil && !st.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
	}
	if err != nil {
		s.CancelWrite(codeNotFound)
		return
	}
	s.SetWriteDeadline(time.Now().Add(time.Minute))
	if _, err := io.Copy(s, f); err != nil {
		s.CancelWrite(codeNotFound)
		return
	}
	s.Close()
}

// fetch gets one file over conn into w.
func fetch(ctx context.Context, conn *quicnet.Conn, path string, w io.Writer) (int64, error) {
	s, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := fmt.Fprintf(s, "GET %s\n", path); err != nil {
		return 0, err
	}
	s.Close()
	n, err := io.Copy(w, s)
	var se *quicnet.StreamError
	if errors.As(err, &se) && se.Remote {
		switch se.ErrorCode {
		case codeNotFound:
			return n, fmt.Errorf("%s: no such file on the server", path)
		case codeBadRequest:
			return n, fmt.Errorf("%s: bad request", path)
		}
	}
	return n, err
}

// client fetches paths over nconns connections, parallel streams at a time
// on each, saving them in out (if set).
func client(addr string, tlsConf *tls.Config, paths []string, nconns, parallel int, out string) error {
	ctx := context.Background()
	start := time.Now()
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, nconns)
	for i := range nconns {
		wg.Go(func() {
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			conn, err := quicnet.Dial(dctx, addr, tlsConf, nil)
			if err != nil {
				errs[i] = err
				return
			}
			defer conn.CloseWithError(0, "done")
			slots := make(chan struct{}, parallel)
			var mu sync.Mutex
			var fwg sync.WaitGroup
			for j := i; j < len(paths); j += nconns {
				slots <- struct{}{}
				fwg.Go(func() {
					defer func() { <-slots }()
					var buf bytes.Buffer
					n, err := fetch(ctx, conn, paths[j], &buf)
					if err == nil && out != "" {
						err = os.WriteFile(filepath.Join(out, filepath.Base(paths[j])), buf.Bytes(), 0o644)
					}
					total.Add(n)
					if err != nil {
						mu.Lock()
						errs[i] = errors.Join(errs[i], err)
						mu.Unlock()
					}
				})
			}
			fwg.Wait()
		})
	}
	wg.Wait()
	d := time.Since(start)
	fmt.Printf("%d files, %d bytes in %v over %d connections (%s): %.0f files/s, %.1f MB/s\n",
		len(paths), total.Load(), d.Round(time.Millisecond), nconns, quicnet.Implementation(),
		float64(len(paths))/d.Seconds(), float64(total.Load())/d.Seconds()/1e6)
	return errors.Join(errs...)
}
