//go:build linux

package kquic_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/handshake"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// floodEnv makes the test binary, started again, flood the address in it
// with ClientHellos instead of running the tests.
const floodEnv = "KQUIC_TEST_FLOOD"

const floodClients = 1000

// floodMain dials floodClients connections at once, each of which stalls
// after the server's first flight (its certificate check waits for stdin to
// close), so that the server's handshakes never complete; it prints how
// the dials ended once every one has either been refused or stalled.
func floodMain(addr string) {
	ap := netip.MustParseAddrPort(addr)
	ctls, _ := tlsPair(nopTB{})
	release := make(chan struct{})
	var stalled, refused, closed, other atomic.Int32
	var otherErr, closedErr atomic.Value
	ctls.VerifyConnection = func(tls.ConnectionState) error {
		stalled.Add(1)
		<-release
		return errors.New("flood client: done")
	}
	var wg sync.WaitGroup
	for i := 0; i < floodClients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			_, err := kquic.DialAddr(ctx, ap, &kquic.Config{TLS: ctls, HandshakeTimeout: 5 * time.Minute, CompactClientHello: true})
			var pc *handshake.PeerClosedError
			var lc *handshake.LocalCloseError
			// The refusal does not reach the client's close record: it
			// holds no code and still the handshake's phrase, which reads
			// as our kernel's end without a CONNECTION_CLOSE.
			ended := errors.As(err, &pc) || errors.As(err, &lc) && lc.Code == 0 && lc.Frame == 0
			switch {
			case ended && errors.Is(err, unix.EINVAL):
				// The connection closed (the server refused it, or it
				// timed out) while crypto/tls was working on the
				// server's first flight: the next call that only an
				// establishing socket takes (installing the Handshake
				// keys, reading our transport parameters) finds it
				// closed.
				closed.Add(1)
				closedErr.Store(err.Error())
			case ended:
				// The kernel refuses with CONNECTION_REFUSED in an
				// Initial; the module records no code for it on the
				// client (it reads 0).
				refused.Add(1)
			case err != nil && strings.Contains(err.Error(), "flood client: done"):
			default:
				other.Add(1)
				otherErr.Store(fmt.Sprint(err))
			}
		}()
	}
	// Report when every dial was refused or stalled (or after a minute).
	deadline := time.Now().Add(3 * time.Minute)
	for int(stalled.Load()+refused.Load()+closed.Load()+other.Load()) < floodClients && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("flood: stalled %d refused %d closed %d other %d (closed: %v; other: %v)\n", stalled.Load(), refused.Load(), closed.Load(), other.Load(), closedErr.Load(), otherErr.Load())
	bufio.NewReader(os.Stdin).ReadString('\n') // until the parent is done
	close(release)
	os.Exit(0)
}

// TestHandshakeFloodIsBounded: 1000 ClientHellos from clients that never
// finish their handshake, against a server that accepts nothing meanwhile:
// the listener runs at most MaxHandshakes handshakes and holds at most
// MaxHandshakes+AcceptQueue connections, the kernel refuses the rest with
// CONNECTION_REFUSED once its backlog is full (the client sees the peer's
// close during the handshake, also when the close came after the server's
// first flight and the client finds its socket closed as it installs the
// Handshake keys or reads its transport parameters), and the server's goroutines
// and heap stay bounded. The clients run in another process, so that this
// one's figures are the server's alone.
func TestHandshakeFloodIsBounded(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	if testing.Short() {
		t.Skip("a flood of 1000 handshakes")
	}
	const maxHS, queue, backlog = 16, 8, 32
	ln := hsListen(t, &kquic.Config{MaxHandshakes: maxHS, AcceptQueue: queue, Backlog: backlog, HandshakeTimeout: 5 * time.Minute})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goBefore := runtime.NumGoroutine()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), floodEnv+"="+ln.AddrPort().String())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	// Sample the server while the flood runs.
	var peakServe, peakGo int
	var peakHeap uint64
	done := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		done <- line
	}()
	var report string
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	buf := make([]byte, 1<<22) // for the goroutines' stacks, made before the baseline counts
	runtime.GC()
	runtime.ReadMemStats(&before)
sample:
	for {
		select {
		case report = <-done:
			break sample
		case <-tick.C:
			stacks := string(buf[:runtime.Stack(buf, true)])
			peakServe = max(peakServe, strings.Count(stacks, "kquic.(*Listener).serve("))
			peakGo = max(peakGo, runtime.NumGoroutine())
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peakHeap = max(peakHeap, ms.HeapInuse)
		case <-time.After(4 * time.Minute):
			t.Fatal("the flood did not end within 4 minutes")
		}
	}
	t.Logf("%s server: at most %d handshake goroutines, %d goroutines (%d before), heap in use at most %.1f MiB (%.1f MiB before)",
		strings.TrimSpace(report), peakServe, peakGo, goBefore, float64(peakHeap)/(1<<20), float64(before.HeapInuse)/(1<<20))
	var stalled, refused, closed, other int
	if _, err := fmt.Sscanf(report, "flood: stalled %d refused %d closed %d other %d", &stalled, &refused, &closed, &other); err != nil {
		t.Fatalf("the flood's report %q: %v", report, err)
	}
	if peakServe > maxHS+queue {
		t.Errorf("%d handshake goroutines at once, want at most %d", peakServe, maxHS+queue)
	}
	// Each handshake in progress is a few goroutines (the handshake's,
	// the one that aborts it on Close).
	if peakGo > goBefore+4*(maxHS+queue) {
		t.Errorf("%d goroutines under the flood (%d before): not bounded by the listener's limits", peakGo, goBefore)
	}
	if refused+closed < floodClients/2 || stalled > maxHS+backlog+queue {
		t.Errorf("%d refused, %d closed, %d reached the server: the kernel should refuse most of %d once the listener stops taking connections", refused, closed, stalled, floodClients)
	}
	if other > 0 {
		t.Errorf("%d dials ended otherwise: %s", other, report)
	}
	// A bound on memory: the listener's state for its connections, not
	// per flooding client.
	if grow := int64(peakHeap) - int64(before.HeapInuse); grow > 32<<20 {
		t.Errorf("heap grew by %.1f MiB under the flood", float64(grow)/(1<<20))
	}
}
