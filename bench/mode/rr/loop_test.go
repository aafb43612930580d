//go:build linux

package rr

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"

	"kquic.dev/bench/latency"
	"kquic.dev/bench/side"
	"kquic.dev/bench/transport"
)

// The rr loop over the tcp transport is lean: the connection has
// TCP_NODELAY, and a round trip - the client's write, read and clock reads,
// the histogram, and the server's read and write - allocates nothing.
func TestRRTCPLoopIsLean(t *testing.T) {
	tcp, _ := transport.Get("tcp")
	ctx := context.Background()
	ln, err := tcp.Listen(ctx, netip.MustParseAddrPort("127.0.0.1:0"), transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := side.Serve(ln, 1, 0)
	defer srv.Close()
	d, err := tcp.Dial(ctx, srv.Addr(), transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := d.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc, err := s.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var nodelay int
	rc.Control(func(fd uintptr) { nodelay, err = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY) })
	if err != nil || nodelay == 0 {
		t.Fatalf("TCP_NODELAY = %d (%v), want on", nodelay, err)
	}
	if _, err := s.Write(Header(64, 4096)); err != nil {
		t.Fatal(err)
	}
	c := &rrConn{s: s, req: make([]byte, 64), resp: make([]byte, 4096), hist: latency.New()}
	for i := 0; i < 100; i++ { // the server's buffers, the runtime's first reads
		if _, _, err := c.trip(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(2000, func() {
		t0, t1, err := c.trip()
		if err != nil {
			t.Fatal(err)
		}
		c.hist.Record(t1.Sub(t0))
	})
	if allocs != 0 {
		t.Fatalf("%.2f allocations per round trip, want 0", allocs)
	}
	if n := srv.Received(); n < 2100*64 {
		t.Fatalf("the server read %d bytes of requests, want at least %d", n, 2100*64)
	}
}
