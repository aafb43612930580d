//go:build linux

package http3_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod/vm"
)

// TestBrowserKernelQUIC: headless Chromium on the host fetches a page and
// its sub-resources over HTTP/3 from examples/h3fileserver, built as any
// program is (no build tag: both implementations in one binary), in a
// guest that loads $KQUIC_MODULE, where it chooses kernel QUIC by itself,
// through a UDP port qemu forwards (vm.Forward): Chromium under emulation
// never answers, the host's does. The page reports h3 for every resource,
// and the server said it serves over kquic.
func TestBrowserKernelQUIC(t *testing.T) {
	mod := os.Getenv(testenv.ModuleEnv)
	if mod == "" {
		if testenv.Required("quic") {
			t.Fatalf("$%s requires kernel QUIC, and $%s names no quic.ko", testenv.RequireEnv, testenv.ModuleEnv)
		}
		t.Skipf("needs the kernel QUIC module for the guest's server: $%s=/path/quic.ko", testenv.ModuleEnv)
	}
	cfg := testenv.VM(t)
	chromium := testenv.Tool(t, "chromium", "chromium")
	server := testenv.GoBuild(t, "kquic.dev/examples/h3fileserver") // no tag: one build for both

	dir := browserDir(t)
	// A free UDP port on the host's loopback for qemu to forward.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	const guestPort = 4433
	cfg.ModuleFiles = []string{mod}
	cfg.Shares = []string{dir}
	cfg.Forwards = []vm.Forward{{Proto: "udp", HostPort: uint16(port), GuestPort: guestPort}}
	cfg.Timeout = 5 * time.Minute
	listening := make(chan struct{})
	logw := &lineWatch{want: "serving ", seen: listening}
	cfg.Stdout, cfg.Stderr = logw, logw
	m, err := vm.Start(context.Background(), cfg, []string{server, "-listen", fmt.Sprintf("%s:%d", vm.ForwardGuestAddr, guestPort),
		"-dir", dir, "-cert", testcerts.Path("server.pem"), "-key", testcerts.Path("server-key.pem")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		m.Stop(5 * time.Second)
		m.Wait()
		t.Logf("the guest's server:\n%s", logw.String())
	}()
	select {
	case <-listening:
	case <-m.Done():
		t.Fatalf("the guest ended before its server listened:\n%s", logw.String())
	case <-time.After(4 * time.Minute):
		t.Fatalf("the guest's server did not listen within 4 minutes:\n%s", logw.String())
	}
	if !strings.Contains(logw.String(), "(kquic)") {
		t.Fatalf("the guest's server does not run over kernel QUIC:\n%s", logw.String())
	}

	loadOverH3(t, "examples/h3fileserver over kernel QUIC in the guest", chromium, fmt.Sprintf("127.0.0.1:%d", port), 3*time.Minute, func() string {
		return "the guest's server printed:\n" + logw.String()
	})
}

// lineWatch keeps what is written to it and closes seen once a write holds
// want.
type lineWatch struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
