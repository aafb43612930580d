package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/testcerts"
	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// startServer serves a directory of n files over HTTP/3 on loopback and
// returns the base URL and a client.
func startServer(t testing.TB, n, size int) (string, *http.Client) {
	t.Helper()
	requireImpl(t)
	dir := t.TempDir()
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}}
	srv := newServer(dir, tlsConf)
	ln, err := quicnet.Listen("udp", "127.0.0.1:0", http3.ConfigureTLSConfig(tlsConf), nil)
	if err != nil {
		t.Fatalf("%s: %v", quicnet.Implementation(), err)
	}
	go srv.ServeListener(ln)
	t.Cleanup(func() {
		srv.Close()
		ln.Close()
	})
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(func() { tr.Close() })
	return "https://" + ln.Addr().String(), &http.Client{Transport: tr, Timeout: 2 * time.Minute}
}

// TestFetch: files come whole, a missing one is 404, a path out of the
// directory is not served, and a directory is listed.
func TestFetch(t *testing.T) {
	const size = 100<<10 + 3
	base, c := startServer(t, 3, size)
	for i := range 3 {
		var buf bytes.Buffer
		if err := fetch(c, fmt.Sprintf("%s/f%03d", base, i), &buf); err != nil || buf.Len() != size || buf.Bytes()[size-1] != byte((size-1)%256) {
			t.Errorf("f%03d: %d bytes, %v", i, buf.Len(), err)
		}
	}
	if err := fetch(c, base+"/missing", io.Discard); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a missing file: %v, want 404", err)
	}
	var buf bytes.Buffer
	if err := fetch(c, base+"/../../../../etc/passwd", &buf); err == nil && strings.Contains(buf.String(), "root:") {
		t.Error("a path outside the served directory was served")
	}
	buf.Reset()
	if err := fetch(c, base+"/", &buf); err != nil || !strings.Contains(buf.String(), `<a href="f002">f002</a>`) {
		t.Errorf("the listing: %q, %v", buf.String(), err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/f001", nil)
	req.Header.Set("Range", "bytes=10-19")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || len(b) != 10 || b[0] != 10 {
		t.Errorf("a range: %s, %v", resp.Status, b)
	}
}

// BenchmarkFiles fetches 16 KiB files over one connection, 16 at a time.
func BenchmarkFiles(b *testing.B) {
	base, c := startServer(b, 16, 16<<10)
	b.SetBytes(16 << 10)
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if err := fetch(c, fmt.Sprintf("%s/f%03d", base, i%16), io.Discard); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}
