//go:build linux

package kcov_test

import (
	"context"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/conformance"
	"kquic.dev/internal/quicsock"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kmod/kcov"
	"kquic.dev/kquic"
)

const ipprotoQUIC = 261

// In a guest booted with a KCOV kernel and quic.ko built for it with
// KCOV_INSTRUMENT=y ($KQUIC_MODULE): sockets made and closed through Run by
// 64 goroutines, wherever the scheduler runs them, are counted 64 times; a
// connection over kernel QUIC, its
// socket calls made through quicsock.Around, is traced: every address
// recorded maps to one of the module's coverage points, and every socket
// call the connection made is reached. Run it so:
//
//	eval $(scripts/kcov-kernel env)
//	KQUIC_MODULE=$KQUIC_KCOV_MODULE go test -run TestTracer -exec "bin/kqbench vm \
//	    --kernel $KQUIC_KCOV_KERNEL --modules $KQUIC_KCOV_MODULES --load udp_tunnel,ip6_udp_tunnel --" ./kmod/kcov
func TestTracer(t *testing.T) {
	if err := kcov.Available(); err != nil {
		if testenv.Required(testenv.KCOVFeature) {
			t.Fatal(err)
		}
		t.Skipf("%v (TestKCOVFuzzRun in kquic.dev/fuzz boots such a kernel from the host)", err)
	}
	testenv.Require(t, kmod.FeatureQUIC)
	ko := os.Getenv("KQUIC_MODULE")
	if ko == "" {
		t.Skip("$KQUIC_MODULE does not name the quic.ko the guest loaded: the trace cannot be mapped")
	}
	tr, err := kcov.Start(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := kcov.ModuleLayout("quic")
	if err != nil {
		t.Fatal(err)
	}
	tr.Reset()
	quicsock.Around = tr.Run
	defer func() { quicsock.Around = nil }()

	// Sockets made and closed by goroutines wherever the scheduler puts
	// them, each call through Run: every call is counted once, whichever
	// thread made it (a goroutine may close its socket on another thread
	// than the one it opened it on, one the pool did not trace).
	const sockets = 64
	var wg sync.WaitGroup
	var mu sync.Mutex
	tids := map[int]bool{}
	for range sockets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var fd int
			var err error
			tr.Run(func() {
				fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, ipprotoQUIC)
				mu.Lock()
				tids[unix.Gettid()] = true
				mu.Unlock()
			})
			if err != nil {
				t.Error(err)
				return
			}
			runtime.Gosched()
			tr.Run(func() {
				unix.Close(fd)
				mu.Lock()
				tids[unix.Gettid()] = true
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	sockTrace := tr.Trace(layout)
	sockCov, err := kcov.Symbolize(ko, sockTrace)
	if err != nil {
		t.Fatal(err)
	}
	traced, all := tr.Threads()
	t.Logf("%d sockets made on %d threads; %d of the process's %d threads traced", sockets, len(tids), traced, all)
	for _, fn := range []string{"quic_init_sock", "quic_close"} {
		if f := sockCov.Function(fn); f == nil || f.Calls != sockets {
			t.Errorf("%s: %+v, want %d calls", fn, f, sockets)
		}
	}
	tr.Reset()

	pair, err := conformance.NewTLSPair()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{TLS: pair.Server})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		s, err := c.AcceptStream(ctx)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(s)
		got <- b
	}()
	c, err := kquic.Dial(ctx, "udp", ln.Addr().String(), &kquic.Config{TLS: pair.Client})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteAndClose([]byte("traced")); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "traced" {
		t.Fatalf("the server read %q", b)
	}
	c.Close()
	trace := tr.Trace(layout)
	cov, err := kcov.Symbolize(ko, trace)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d addresses; %d of %d points, %d of %d lines, %d of %d functions, %d of %d threads traced",
		len(trace.PCs), cov.Reached, cov.Points, cov.LinesReached, cov.Lines, cov.FunctionsReached, cov.FunctionsInstrumented, cov.ThreadsTraced, cov.Threads)
	if cov.Unmapped != 0 || cov.Reached == 0 {
		t.Fatalf("%d addresses are no coverage point of %s (%d are)", cov.Unmapped, ko, cov.Reached)
	}
	for _, fn := range []string{"quic_init_sock", "quic_connect", "quic_setsockopt", "quic_sendmsg", "quic_recvmsg", "quic_accept"} {
		if f := cov.Function(fn); f == nil || f.Reached == 0 {
			t.Errorf("%s not reached: %+v", fn, f)
		}
	}
}
