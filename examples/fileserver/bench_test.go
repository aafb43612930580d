package main

// Benchmarks of the file server over the implementation quicnet chooses
// here (go test -bench . ./examples/fileserver/: kernel QUIC where the
// module is loaded, else quic-go; QUICNET_IMPLEMENTATION to choose): many files over one connection, and many connections each
// fetching one file (handshakes included).

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/internal/testcerts"
	"kquic.dev/quicnet"
)

const (
	benchFiles    = 200
	benchFileSize = 16 << 10
	benchConns    = 50
	benchParallel = 16
)

// benchServer serves benchFiles files of benchFileSize bytes and returns
// the client's TLS configuration and the server's address.
func benchServer(b testing.TB) (*tls.Config, string) {
	b.Helper()
	dir := b.TempDir()
	data := make([]byte, benchFileSize)
	for i := range data {
		data[i] = byte(i)
	}
	for i := range benchFiles {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { root.Close() })
	cert, err := testcerts.Server()
	if err != nil {
		b.Fatal(err)
	}
	pool, err := testcerts.Pool()
	if err != nil {
		b.Fatal(err)
	}
	ln, err := quicnet.Listen("udp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn}}, nil)
	if errors.Is(err, errors.ErrUnsupported) {
		b.Skipf("%s: %v", quicnet.Implementation(), err)
	}
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		serve(ln, root)
		close(done)
	}()
	b.Cleanup(func() {
		ln.Close()
		<-done
	})
	b.Logf("implementation: %s", quicnet.Implementation())
	return &tls.Config{RootCAs: pool, NextProtos: []string{alpn}}, ln.Addr().String()
}

func dialB(addr string, tlsConf *tls.Config) (*quicnet.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return quicnet.Dial(ctx, addr, tlsConf, nil)
}

func fetchOne(b *testing.B, conn *quicnet.Conn, i int) {
	n, err := fetch(context.Background(), conn, fmt.Sprintf("f%03d", i%benchFiles), io.Discard)
	if err != nil {
		b.Error(err)
	} else if n != benchFileSize {
		b.Errorf("got %d bytes, want %d", n, benchFileSize)
	}
}

// BenchmarkFiles: one op fetches every file over one open connection,
// benchParallel streams at a time.
func BenchmarkFiles(b *testing.B) {
	tlsConf, addr := benchServer(b)
	conn, err := dialB(addr, tlsConf)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.CloseWithError(0, "")
	b.SetBytes(benchFiles * benchFileSize)
	for b.Loop() {
		slots := make(chan struct{}, benchParallel)
		var wg sync.WaitGroup
		for i := range benchFiles {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				fetchOne(b, conn, i)
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(benchFiles*b.N)/b.Elapsed().Seconds(), "files/s")
}

// BenchmarkConns: one op opens benchConns connections, benchParallel at a
// time, each fetching one file and closing. (A quic-go server refuses
// handshakes that complete while its accept queue of 32 is full, so a burst
// of 50 can see CONNECTION_REFUSED however fast the server accepts.)
func BenchmarkConns(b *testing.B) {
	tlsConf, addr := benchServer(b)
	b.SetBytes(benchConns * benchFileSize)
	for b.Loop() {
		slots := make(chan struct{}, benchParallel)
		var wg sync.WaitGroup
		for i := range benchConns {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				conn, err := dialB(addr, tlsConf)
				if err != nil {
					b.Error(err)
					return
				}
				fetchOne(b, conn, i)
				conn.CloseWithError(0, "")
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(benchConns*b.N)/b.Elapsed().Seconds(), "files/s")
}

// TestFetch: the client gets files whole over one connection, a missing
// file is an error naming it, and a path out of the served directory is
// refused.
func TestFetch(t *testing.T) {
	tlsConf, addr := benchServer(t)
	conn, err := dialB(addr, tlsConf)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseWithError(0, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, i := range []int{0, 7, benchFiles - 1} {
		var buf bytes.Buffer
		n, err := fetch(ctx, conn, fmt.Sprintf("f%03d", i), &buf)
		if err != nil || n != benchFileSize || buf.Bytes()[benchFileSize-1] != byte((benchFileSize-1)%256) {
			t.Errorf("f%03d: %d bytes, %v", i, n, err)
		}
	}
	if _, err := fetch(ctx, conn, "missing", io.Discard); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := fetch(ctx, conn, "../../etc/passwd", io.Discard); err == nil {
		t.Error("a path outside the served directory was served")
	}
}
