//go:build linux

package tlsagent

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/parked"
	"kquic.dev/internal/testenv"
)

// logBuffer collects the agent's log lines for assertions and echoes them
// to the test log.
type logBuffer struct {
	t  *testing.T
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.b.Write(p)
	l.mu.Unlock()
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// find returns the log lines holding every one of words.
func (l *logBuffer) find(words ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		ok := line != ""
		for _, w := range words {
			ok = ok && strings.Contains(line, w)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// listen starts an agent on the real handshake family, or skips where the
// kernel has none.
func listen(t *testing.T, cfg *Config) (*Agent, *logBuffer) {
	t.Helper()
	testenv.Root(t)
	logs := &logBuffer{t: t}
	a, err := Listen(cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("needs the kernel's handshake netlink family: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, logs
}

// serve runs the agent until the test ends (or stop is called); stop
// returns Serve's result.
func serve(t *testing.T, a *Agent) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				err = errors.New("Serve did not return within 30s of its context's end")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

// The family as the kernel registered it, and the kernel's answers to
// accept and done without a request: our messages as it parses them.
func TestKernelFamily(t *testing.T) {
	a, _ := listen(t, nil)
	f := a.Family()
	if f.Name != familyName || f.Version != familyVersion || f.ID == 0 {
		t.Errorf("family %+v, want %q version %d", f, familyName, familyVersion)
	}
	var groups []string
	for _, g := range f.Groups {
		groups = append(groups, g.Name)
	}
	if strings.Join(groups, ",") != "none,tlshd" {
		t.Errorf("multicast groups %q, want none,tlshd (the spec's mcast-groups)", groups)
	}
	if r, err := a.accept(); !errors.Is(err, unix.EAGAIN) {
		t.Errorf("accept with nothing pending: %v %v, want EAGAIN", r, err)
	}
	// DONE for a socket with no request: the kernel finds none (EBUSY).
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := a.done(&Request{FD: fd}, 0, nil); !errors.Is(err, unix.EBUSY) {
		t.Errorf("done for a socket without a request: %v, want EBUSY", err)
	}
	// DONE naming no open file.
	if err := a.done(&Request{FD: 1 << 20}, 0, nil); !errors.Is(err, unix.EBADF) {
		t.Errorf("done for fd %d: %v, want EBADF", 1<<20, err)
	}
}

// Serve returns promptly once its context ends, with nothing in flight.
func TestServeStops(t *testing.T) {
	a, logs := listen(t, nil)
	stop := serve(t, a)
	// Serve is at work: waiting for a request, its receiver for the
	// kernel's multicast.
	parked.Wait(t, "kquic.dev/tlsagent.(*Agent).Serve", "kquic.dev/tlsagent.(*Agent).receive")
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Serve took %v to stop", d)
	}
	if len(logs.find("shutting down")) != 1 {
		t.Error("no shutdown line in the log")
	}
}
