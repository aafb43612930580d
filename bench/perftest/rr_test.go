//go:build linux

package perftest_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
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

// rrServer starts ServeRR on loopback and returns its address and the
// request counts it reports.
func rrServer(t *testing.T, rspLen int) (string, func() []int64) {
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
		done <- perftest.ServeRR(ctx, ln, rspLen, func(n int64, err error) {
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
			t.Errorf("ServeRR: %v", err)
		}
	})
	return ln.Addr().String(), func() []int64 {
		mu.Lock()
		defer mu.Unlock()
		return append([]int64(nil), got...)
	}
}

func waitCount(t *testing.T, f func() []int64, n int) []int64 {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for len(f()) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return f()
}

func checkRR(t *testing.T, r perftest.RRResult, n int64) {
	t.Helper()
	s := r.Latency.Summary()
	if r.Requests != n || s.Count != n || r.Elapsed <= 0 {
		t.Fatalf("RunRR: %d requests, %d round trips recorded, elapsed %v; want %d", r.Requests, s.Count, r.Elapsed, n)
	}
	if !(s.Min > 0 && s.Min <= s.P50 && s.P50 <= s.P90 && s.P90 <= s.P99 && s.P99 <= s.P999 && s.P999 <= s.P9999 && s.P9999 <= s.Max) {
		t.Fatalf("percentiles out of order: %v", s)
	}
	// The mean from the histogram agrees with perf_test's own sum.
	if mean := r.Elapsed / time.Duration(n); absDur(mean-s.Mean) > mean/100 {
		t.Fatalf("histogram mean %v, sum of round trips / n %v", s.Mean, mean)
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func TestRRGoToGo(t *testing.T) {
	addr, served := rrServer(t, 4096)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := kquic.Dial(ctx, "udp", addr, clientConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	r, err := perftest.RunRR(ctx, c, 64, 4096, 500)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	checkRR(t, r, 500)
	t.Log(r)
	// The server answered the unmeasured first request and the 500.
	if got := waitCount(t, served, 1); len(got) != 1 || got[0] != 501 {
		t.Fatalf("the server reported %v requests, want [501]", got)
	}
	if _, err := perftest.RunRR(ctx, nil, 2000, 10, 1); err == nil || !strings.Contains(err.Error(), "1..1024") {
		t.Fatalf("RunRR with a 2000-byte request: %v", err)
	}
}

// cPerfTest is the module's built tests/perf_test (or a wrapper running
// it), from $KQUIC_PERF_TEST; the test skips without it, and fails without
// it when $KQUIC_REQUIRE names "perftest".
func cPerfTest(t *testing.T) string {
	t.Helper()
	p := os.Getenv("KQUIC_PERF_TEST")
	if p == "" {
		if testenv.Required("perftest") {
			t.Fatal("KQUIC_PERF_TEST is not set: give the module's built tests/perf_test (this project ships none)")
		}
		t.Skip("KQUIC_PERF_TEST is not set: give the module's built tests/perf_test (this project ships none)")
	}
	return p
}

// freePort returns a UDP port on loopback that nothing holds now.
func freePort(t *testing.T) int {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// The module's C perf_test server in -d 1 mode answers kqbench's client.
func TestRRGoClientCServer(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	bin := cPerfTest(t)
	port := freePort(t)
	var out bytes.Buffer
	srv := exec.Command(bin, "-l", "-d", "1", "-r", "1000", "-a", "127.0.0.1", "-p", strconv.Itoa(port),
		"-c", testcerts.Path("server.pem"), "-k", testcerts.Path("server-key.pem"))
	srv.Stdout, srv.Stderr = &out, &out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// One dial, with time to spare: perf_test serves one connection at a
	// time and exits when a handshake fails, so a client that gave up
	// half way (a short timeout on a loaded machine) would leave no server
	// for the next try. An Initial sent before it listens is sent again.
	time.Sleep(time.Second)
	cfg := clientConfig(t)
	cfg.HandshakeTimeout = time.Minute
	c, err := kquic.Dial(ctx, "udp", fmt.Sprintf("127.0.0.1:%d", port), cfg)
	if err != nil {
		t.Fatalf("dial perf_test's server: %v\n%s", err, out.String())
	}
	r, err := perftest.RunRR(ctx, c, 100, 1000, 300)
	c.Close()
	if err != nil {
		t.Fatalf("%v\nperf_test server:\n%s", err, out.String())
	}
	checkRR(t, r, 300)
	t.Log(r)
}

// The module's C perf_test client in -d 1 mode gets its answers from
// kqbench's server: it completes, and both count the same requests.
func TestRRCClientGoServer(t *testing.T) {
	bin := cPerfTest(t)
	addr, served := rrServer(t, 512)
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-d", "1", "-q", "32", "-r", "512", "-n", "400", "-a", host, "-p", port).CombinedOutput()
	if err != nil {
		t.Fatalf("perf_test client: %v (%v)\n%s", err, ctx.Err(), out)
	}
	m := regexp.MustCompile(`Total requests:\s+(\d+)`).FindSubmatch(out)
	if m == nil || string(m[1]) != "400" || !bytes.Contains(out, []byte("Requests/sec:")) {
		t.Fatalf("perf_test client did not report 400 requests:\n%s", out)
	}
	t.Logf("perf_test client:\n%s", lastLines(string(out), 10))
	if got := waitCount(t, served, 1); len(got) != 1 || got[0] != 401 {
		t.Fatalf("the server reported %v requests, want [401] (the unmeasured first and 400)", got)
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
