package http3_test

// Benchmarks of this package against quic-go's own http3, on the same host
// and handler (go test -run '^$' -bench . -benchmem ./quicnet/http3/; run
// them a few times in turn and compare with benchstat, see docs/http3.md):
//
//   - server=this|quic-go: this Server or quic-go's, each with quic-go's
//     http3 client (the server is what differs);
//   - stack=this|quic-go: this client and server, or quic-go's client and
//     server.
//
// SmallRequests: 1 KiB responses over 16 connections, requests/s.
// Download: one 256 MiB response (-h3.download sets another size, for
// the slow TCG guest), MB/s.

import (
	"context"
	"flag"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"kquic.dev/quicnet/http3"
)

const (
	benchConns = 16
	benchSmall = 1 << 10
)

var benchDownload = flag.Int64("h3.download", 256<<20, "size of BenchmarkDownload's response in bytes")

// benchHandler serves /small (1 KiB) and /big?n=N.
func benchHandler() http.Handler {
	small := make([]byte, benchSmall)
	mux := http.NewServeMux()
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(small)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(n))
		writePattern(w, int64(n))
	})
	return mux
}

type benchSetup struct {
	name string
	// start returns the base URL and a function giving a new client
	// (one connection each).
	start func(b *testing.B) (string, func() *http.Client)
}

var benchSetups = []benchSetup{
	{"server=this", func(b *testing.B) (string, func() *http.Client) {
		return startServer(b, &http3.Server{Handler: benchHandler()}, nil), func() *http.Client { return quicGoClient(b) }
	}},
	{"server=quic-go", func(b *testing.B) (string, func() *http.Client) {
		return startQuicGoServer(b, benchHandler()), func() *http.Client { return quicGoClient(b) }
	}},
	{"stack=this", func(b *testing.B) (string, func() *http.Client) {
		return startServer(b, &http3.Server{Handler: benchHandler()}, nil), func() *http.Client { return client(b, nil) }
	}},
	{"stack=quic-go", func(b *testing.B) (string, func() *http.Client) {
		return startQuicGoServer(b, benchHandler()), func() *http.Client { return quicGoClient(b) }
	}},
}

func BenchmarkSmallRequests(b *testing.B) {
	for _, s := range benchSetups {
		if s.name == "stack=quic-go" {
			continue // the same as server=quic-go
		}
		b.Run(s.name, func(b *testing.B) {
			base, newClient := s.start(b)
			clients := make([]*http.Client, benchConns)
			for i := range clients {
				clients[i] = newClient()
				fetchBench(b, clients[i], base+"/small", benchSmall) // the connection is up
			}
			var next atomic.Int64
			b.SetParallelism(benchConns) // GOMAXPROCS * 16 goroutines
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				c := clients[next.Add(1)%benchConns]
				for pb.Next() {
					fetchBench(b, c, base+"/small", benchSmall)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

func BenchmarkDownload(b *testing.B) {
	for _, s := range benchSetups {
		b.Run(s.name, func(b *testing.B) {
			base, newClient := s.start(b)
			c := newClient()
			url := base + "/big?n=" + strconv.FormatInt(*benchDownload, 10)
			b.SetBytes(*benchDownload)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				fetchBench(b, c, url, *benchDownload)
			}
		})
	}
}

func fetchBench(b *testing.B, c *http.Client, url string, want int64) {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{resp.Body}, make([]byte, 32<<10))
	resp.Body.Close()
	if err != nil || n != want {
		b.Errorf("GET %s: %d bytes, %v", url, n, err)
	}
}
