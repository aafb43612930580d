//go:build linux

package kquic

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicsock"
)

// These tests drive the listener's accept loop with a scripted kernel: no
// module is needed, so they run everywhere, with -race in CI.

// scriptedListener is a listener whose accept and handshake are the test's.
func scriptedListener(t *testing.T, cfg *Config, accept func(*Listener) (*quicsock.Socket, netip.AddrPort, error), hs func(*Listener, *quicsock.Socket) (*Conn, error)) *Listener {
	t.Helper()
	l := newListener(&quicsock.Socket{}, cfg, netip.MustParseAddrPort("127.0.0.1:4433"))
	l.accept = func() (*quicsock.Socket, netip.AddrPort, error) { return accept(l) }
	if hs != nil {
		l.handshake = func(s *quicsock.Socket) (*Conn, error) { return hs(l, s) }
	}
	l.start()
	return l
}

// blockUntilClosed is an accept that waits for the listener's Close, as the
// socket's does.
func blockUntilClosed(l *Listener) (*quicsock.Socket, netip.AddrPort, error) {
	<-l.closed
	return nil, netip.AddrPort{}, errors.New("use of closed file")
}

// TestAcceptReturnsTheLoopsError: an accept error that does not pass ends
// the loop, and Accept returns it at once (not when its context ends), as a
// *net.OpError with the errno reachable.
func TestAcceptReturnsTheLoopsError(t *testing.T) {
	l := scriptedListener(t, &Config{}, func(*Listener) (*quicsock.Socket, netip.AddrPort, error) {
		return nil, netip.AddrPort{}, unix.EINVAL
	}, nil)
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := l.Accept(ctx)
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "accept" || op.Addr.String() != "127.0.0.1:4433" {
		t.Fatalf("Accept = %v, want a *net.OpError for accept on the listener's address", err)
	}
	if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Accept = %v: the errno is not reachable with errors.Is", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Accept took %v: it waited for its context", d)
	}
	// Later calls report it too.
	if _, err2 := l.Accept(ctx); !errors.Is(err2, syscall.EINVAL) {
		t.Errorf("second Accept = %v", err2)
	}
}

// TestAcceptRetriesTransientErrors: EMFILE and ENOBUFS pass; the loop logs
// them, backs off and goes on.
func TestAcceptRetriesTransientErrors(t *testing.T) {
	var calls atomic.Int32
	var times []time.Time
	var mu sync.Mutex
	var logged []string
	var logMu sync.Mutex
	h := slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		logMu.Lock()
		logged = append(logged, string(b))
		logMu.Unlock()
		return len(b), nil
	}), nil)
	script := []error{unix.EMFILE, unix.ENOBUFS, unix.EMFILE}
	done := make(chan struct{})
	l := scriptedListener(t, &Config{Logger: slog.New(h)}, func(l *Listener) (*quicsock.Socket, netip.AddrPort, error) {
		n := int(calls.Add(1)) - 1
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if n < len(script) {
			return nil, netip.AddrPort{}, script[n]
		}
		if n == len(script) {
			close(done)
		}
		return blockUntilClosed(l)
	}, nil)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the loop stopped after %d accept calls", calls.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.Accept(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Accept after transient errors = %v, want to wait (the loop goes on)", err)
	}
	l.Close()
	mu.Lock()
	defer mu.Unlock()
	// Backoff: 5, 10, 20 ms.
	for i, want := range []time.Duration{5, 10, 20} {
		if got := times[i+1].Sub(times[i]); got < want*time.Millisecond {
			t.Errorf("retry %d came after %v, want at least %v", i+1, got, want*time.Millisecond)
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	if len(logged) != 3 || !strings.Contains(logged[0], "too many open files") || !strings.Contains(logged[0], "level=WARN") {
		t.Errorf("logged %q, want three warnings naming the errors", logged)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestListenerBounds: with handshakes that do not finish, the listener runs
// at most MaxHandshakes of them and takes no further connection from the
// kernel; completed connections wait in a queue of AcceptQueue (plus those
// completing meanwhile); Accept frees a place and the loop goes on. Close
// ends everything and leaves no goroutine.
func TestListenerBounds(t *testing.T) {
	before := runtime.NumGoroutine()
	const hsMax, qMax = 4, 3
	var (
		accepted atomic.Int32
		running  atomic.Int32
		peak     atomic.Int32
		release  = make(chan struct{})
		stopping atomic.Bool
	)
	l := scriptedListener(t, &Config{MaxHandshakes: hsMax, AcceptQueue: qMax},
		func(l *Listener) (*quicsock.Socket, netip.AddrPort, error) {
			if stopping.Load() {
				<-l.closed
				return nil, netip.AddrPort{}, errors.New("closed")
			}
			accepted.Add(1)
			return &quicsock.Socket{}, netip.MustParseAddrPort("127.0.0.2:1000"), nil
		},
		func(l *Listener, _ *quicsock.Socket) (*Conn, error) {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			defer running.Add(-1)
			select {
			case <-release:
				return closableConn(), nil
			case <-l.closed:
				return nil, errors.New("aborted")
			}
		})
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: accepted %d, running %d", what, accepted.Load(), running.Load())
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor("handshakes start", func() bool { return running.Load() == hsMax })
	time.Sleep(100 * time.Millisecond)
	if a := accepted.Load(); a != hsMax {
		t.Fatalf("the loop took %d connections from the kernel with %d handshakes stuck, want %d", a, hsMax, hsMax)
	}
	// Let every handshake complete from now on: the queue fills.
	close(release)
	waitFor("queue fills", func() bool { return accepted.Load() == hsMax+qMax && running.Load() == 0 })
	time.Sleep(100 * time.Millisecond)
	if a := accepted.Load(); a != hsMax+qMax {
		t.Fatalf("took %d connections with nobody accepting, want at most %d", a, hsMax+qMax)
	}
	if p := peak.Load(); p > hsMax {
		t.Errorf("%d handshakes ran at once, want at most %d", p, hsMax)
	}
	// Accept frees places: the loop takes one more per Accept.
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if _, err := l.Accept(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("accept frees places", func() bool { return accepted.Load() == hsMax+qMax+5 })
	// Stop taking connections; Close closes those still queued.
	stopping.Store(true)
	l.Close()
	if _, err := l.Accept(ctx); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close = %v, want net.ErrClosed", err)
	}
	waitFor("goroutines end", func() bool { return runtime.NumGoroutine() <= before })
}

// closableConn is a connection with no socket behind it that Close can end,
// as the listener's Close does to the connections nobody accepted.
func closableConn() *Conn {
	readerOut := make(chan struct{})
	close(readerOut)
	return &Conn{sock: &quicsock.Socket{}, closed: make(chan struct{}), readerOut: readerOut}
}
