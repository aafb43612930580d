package interop

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"kquic.dev/quicnet"
	"kquic.dev/quicnet/http3"
)

// TestFetchH3Concurrent: the HTTP/3 clients that fetch through fetchH3
// (quic-go's, quicnet's) have maxFetches requests in flight at once, and no
// more, as the runner's clients request a case's files in parallel: the
// server holds every request until maxFetches are in, or the test's limit.
func TestFetchH3Concurrent(t *testing.T) {
	clients := []Impl{QuicGo{}, Quicnet{Impl: quicnet.QuicGo}}
	if quicnet.Available(quicnet.Kernel) == nil {
		clients = append(clients, Quicnet{Impl: quicnet.Kernel})
	}
	for _, client := range clients {
		name := client.Name()
		if q, ok := client.(Quicnet); ok {
			name += "-" + q.Impl.String()
		}
		t.Run(name, func(t *testing.T) { testFetchConcurrent(t, client) })
	}
}

func testFetchConcurrent(t *testing.T, client Impl) {
	dir := t.TempDir()
	cs, err := newCerts(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	const files = maxFetches + 8
	var (
		mu            sync.Mutex
		inFlight, top int
		full          = make(chan struct{})
	)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		if inFlight > top {
			top = inFlight
			if top == maxFetches {
				close(full)
			}
		}
		mu.Unlock()
		select {
		case <-full:
		case <-ctx.Done():
		}
		fmt.Fprintf(w, "body of %s", r.URL.Path)
		mu.Lock()
		inFlight--
		mu.Unlock()
	})
	ln, err := quicnet.Listen("udp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cs.server}, NextProtos: []string{H3}},
		&quicnet.Config{Implementation: quicnet.QuicGo, MaxIncomingStreams: 2 * maxFetches})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{Handler: handler}
	go srv.ServeListener(ln)
	defer func() { srv.Close(); ln.Close() }()

	var paths []string
	for i := range files {
		paths = append(paths, fmt.Sprintf("/f%d", i))
	}
	dl := filepath.Join(dir, "download")
	if err := os.Mkdir(dl, 0o755); err != nil {
		t.Fatal(err)
	}
	err = client.Fetch(ctx, ClientConfig{Server: ln.Addr().(*net.UDPAddr), ServerName: "server", Roots: cs.pool, Paths: paths, Download: dl,
		ALPN: H3, KeyLog: &KeyLog{}, Output: os.Stderr})
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if top != maxFetches {
		t.Errorf("at most %d requests in flight at once, want %d (of %d)", top, maxFetches, files)
	}
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(dl, p))
		if want := "body of " + p; err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", p, b, err, want)
		}
	}
}
