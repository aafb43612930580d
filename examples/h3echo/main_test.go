package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/testcerts"
	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// TestEcho: messages come back whole; a streamed body is echoed while it
// is still being sent (the first part returns before the rest is written).
func TestEcho(t *testing.T) {
	requireImpl(t)
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := quicnet.Listen("udp", "127.0.0.1:0", http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}), nil)
	if err != nil {
		t.Fatalf("%s: %v", quicnet.Implementation(), err)
	}
	srv := &http3.Server{Handler: echoHandler()}
	go srv.ServeListener(ln)
	defer ln.Close()
	defer srv.Close()
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	url := "https://" + ln.Addr().String() + "/"
	for _, m := range []string{"hello", "world", strings.Repeat("x", 300<<10)} {
		if got, err := echo(c, url, m); err != nil || got != m {
			t.Errorf("echo of %d bytes: %d bytes back, %v", len(m), len(got), err)
		}
	}
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, url, pr)
	go pw.Write([]byte("first"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first" {
		t.Fatalf("the first part: %q, %v", buf, err)
	}
	go func() {
		pw.Write([]byte("second"))
		pw.Close()
	}()
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "second" {
		t.Errorf("the rest: %q, %v", rest, err)
	}
	if got, err := echo(c, url, ""); err != nil || got != "" {
		t.Errorf("an empty body: %q, %v", got, err)
	}
}
