//go:build linux

package perftest_test

import (
	"context"
	"crypto/tls"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/bench/perftest"
	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// server starts Serve on loopback and returns its address and the byte
// counts it reports.
func server(t *testing.T) (string, func() []int64) {
	t.Helper()
	testenv.Require(t, kmod.FeatureQUIC)
	cert, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{perftest.ALPN}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu  sync.Mutex
		got []int64
	)
	done := make(chan error, 1)
	go func() {
		done <- perftest.Serve(ctx, ln, func(n int64, err error) {
			if err != nil {
				t.Errorf("server: %v", err)
			}
			mu.Lock()
			got = append(got, n)
			mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		cancel()
		ln.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), func() []int64 {
		mu.Lock()
		defer mu.Unlock()
		return append([]int64(nil), got...)
	}
}

func clientConfig(t *testing.T) *kquic.Config {
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	return &kquic.Config{TLS: &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{perftest.ALPN}}}
}

func TestRunAndServe(t *testing.T) {
	addr, received := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		msgLen int
		total  int64
	}{{1024, 4 << 20}, {4096, 4<<20 + 100}, {65536, 1 << 20}} {
		c, err := kquic.Dial(ctx, "udp", addr, clientConfig(t))
		if err != nil {
			t.Fatal(err)
		}
		r, err := perftest.Run(ctx, c, tc.msgLen, tc.total)
		c.Close()
		if err != nil {
			t.Fatalf("Run(%d, %d): %v", tc.msgLen, tc.total, err)
		}
		if r.Bytes != tc.total || r.MsgLen != tc.msgLen || r.Elapsed <= 0 || r.MBps() <= 0 {
			t.Fatalf("Run(%d, %d) = %+v", tc.msgLen, tc.total, r)
		}
		if !strings.Contains(r.String(), "Mbits/sec (perf_test's units)") {
			t.Fatalf("result line %q does not give perf_test's units", r)
		}
		t.Log(r)
	}
	// The server saw each client's bytes, exactly.
	deadline := time.Now().Add(10 * time.Second)
	for len(received()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := received()
	if len(got) != 3 || got[0] != 4<<20 || got[1] != 4<<20+100 || got[2] != 1<<20 {
		t.Fatalf("the server received %v, want [%d %d %d]", got, 4<<20, 4<<20+100, 1<<20)
	}
}

func TestRunConnections(t *testing.T) {
	addr, received := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := perftest.RunConnections(ctx, addr, clientConfig(t), 5, 1024, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if r.Conns != 5 || r.PerSecond() <= 0 {
		t.Fatalf("RunConnections = %+v", r)
	}
	t.Log(r)
	deadline := time.Now().Add(10 * time.Second)
	for len(received()) < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := received(); len(got) != 5 {
		t.Fatalf("the server served %d connections (%v), want 5", len(got), got)
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := perftest.Run(ctx, nil, 0, 10); err == nil || !strings.Contains(err.Error(), "must both be positive") {
		t.Fatalf("Run with message length 0: %v", err)
	}
	if _, err := perftest.RunConnections(ctx, "127.0.0.1:1", nil, 0, 1, 1); err == nil {
		t.Fatal("RunConnections with 0 connections succeeded")
	}
}

func TestPerfTestUnits(t *testing.T) {
	// perf_test: tot_len*8*1000/1024/ms, then /1024 for "Mbits/sec".
	r := perftest.Result{Bytes: 1 << 30, Elapsed: 16384 * time.Millisecond}
	if got := r.PerfTestMbps(); got != 500 {
		t.Fatalf("1 GiB in 16.384 s = %v perf_test Mbits/sec, want 500", got)
	}
	if got := r.MBps(); got < 65.5 || got > 65.6 {
		t.Fatalf("1 GiB in 16.384 s = %v MB/s, want 65.5", got)
	}
}
