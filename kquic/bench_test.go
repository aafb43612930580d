//go:build linux

package kquic_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"kquic.dev/kquic"
)

// BenchmarkStreamThroughput writes b.N buffers of each size on one stream
// through the Go API and waits until the server has read them all; the
// figure is bytes delivered per second (b.SetBytes). Loopback, Reno,
// default transport parameters.
func BenchmarkStreamThroughput(b *testing.B) {
	for _, size := range []int{1 << 10, 4 << 10, 16 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			cli, srv := pair(b, nil, nil)
			got := make(chan int64, 1)
			go func() {
				s, err := srv.AcceptStream(context.Background())
				if err != nil {
					got <- -1
					return
				}
				n, _ := io.CopyBuffer(io.Discard, s, make([]byte, 256<<10))
				got <- n
			}()
			s, err := cli.OpenStream()
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, size)
			newPRNG(7).Read(buf)
			b.SetBytes(int64(size))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			select {
			case n := <-got:
				if n != int64(b.N)*int64(size) {
					b.Fatalf("server read %d bytes, want %d", n, int64(b.N)*int64(size))
				}
			case <-time.After(5 * time.Minute):
				b.Fatal("the server did not read everything")
			}
		})
	}
}

// BenchmarkHandshake measures sequential connections: Dial, Accept (both
// handshakes complete) and Close, on loopback, with a fresh session each
// time (no resumption).
func BenchmarkHandshake(b *testing.B) {
	ln := hsListen(b, &kquic.Config{DisableSessionTickets: true})
	ctls, _ := tlsPair(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := kquic.DialAddr(ctx, ln.AddrPort(), &kquic.Config{TLS: ctls})
		if err != nil {
			b.Fatal(err)
		}
		sc, err := ln.Accept(ctx)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
		sc.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
}
