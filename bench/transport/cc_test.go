//go:build linux

package transport

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

var loopback = netip.MustParseAddrPort("127.0.0.1:0")

// TestCCNotApplicable: the algorithms a transport cannot use make its cell
// n/a, saying why.
func TestCCNotApplicable(t *testing.T) {
	for _, c := range []struct {
		tr, cc string
		ok     bool
		note   string
	}{
		{"kquic", "bbr", false, "reno and cubic"},
		{"kquic", "cubic", true, "congestion control cubic"},
		{"quic-go", "reno", false, "its own CUBIC"},
		{"quic-go", "cubic", true, "its own CUBIC"},
		{"tcp", "bbr", true, "TCP_CONGESTION bbr"},
		{"ktls", "reno", true, "TCP_CONGESTION reno"},
	} {
		tr, _ := Get(c.tr)
		ok, note := tr.Support(Options{Crypto: c.tr != "tcp", GSO: true, CC: c.cc})
		if ok != c.ok || !strings.Contains(note, c.note) {
			t.Errorf("%s with %s: %v %q, want %v and %q", c.tr, c.cc, ok, note, c.ok, c.note)
		}
	}
	if err := ValidCongestionControl("vegas"); err == nil || !strings.Contains(err.Error(), "reno, cubic, bbr") {
		t.Errorf("vegas: %v", err)
	}
}

// TestTCPCongestionReadBack opens TCP and kTLS connections with each
// algorithm and reads TCP_CONGESTION back from both ends' sockets.
func TestTCPCongestionReadBack(t *testing.T) {
	testenv.Root(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, cc := range CongestionControls {
		o := Options{CC: cc}
		tr, _ := Get("tcp")
		ln, err := tr.Listen(ctx, loopback, o)
		if err != nil {
			// Without tcp_bbr the error says to load it; with "bbr" in
			// $KQUIC_REQUIRE the algorithm must be there.
			if cc == "bbr" && strings.Contains(err.Error(), "load tcp_bbr") && !testenv.Required("bbr") {
				t.Logf("bbr not tested: %v", err)
				continue
			}
			t.Fatalf("%s: %v", cc, err)
		}
		d, _ := tr.Dial(ctx, ln.Addr(), o)
		cs, err := d.Open(ctx)
		if err != nil {
			t.Fatalf("%s: %v", cc, err)
		}
		ss, err := ln.Accept(ctx)
		if err != nil {
			t.Fatalf("%s: %v", cc, err)
		}
		for end, c := range map[string]any{"client": cs, "server": ss, "listener": ln.(*tcpListener).ln} {
			got, err := TCPCongestion(c.(syscall.Conn))
			if err != nil || got != cc {
				t.Errorf("tcp %s: TCP_CONGESTION = %q, %v; want %s", end, got, err, cc)
			}
		}
		cs.Close()
		ss.Close()
		ln.Close()

		if kmod.Probe(kmod.FeatureTLS) != nil {
			continue
		}
		o.Crypto = true
		kt, _ := Get("ktls")
		kln, err := kt.Listen(ctx, loopback, o)
		if err != nil {
			t.Fatalf("ktls %s: %v", cc, err)
		}
		if got, err := TCPCongestion(kln.(*ktlsListener).ln); err != nil || got != cc {
			t.Errorf("ktls listener: TCP_CONGESTION = %q, %v; want %s", got, err, cc)
		}
		kd, _ := kt.Dial(ctx, kln.Addr(), o)
		nc, err := kd.(*ktlsDialer).nd.DialContext(ctx, "tcp", kln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if got, err := TCPCongestion(nc.(*net.TCPConn)); err != nil || got != cc {
			t.Errorf("ktls client's socket: TCP_CONGESTION = %q, %v; want %s", got, err, cc)
		}
		nc.Close()
		kln.Close()
	}
}

// quicConfig reads QUIC_SOCKOPT_CONFIG back from a kernel QUIC socket.
func quicConfig(t *testing.T, c syscall.Conn) quicabi.Config {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, quicabi.SizeofConfig)
	var gerr error
	rc.Control(func(fd uintptr) {
		l := uint32(len(b))
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, quicabi.SOL_QUIC, quicabi.QUIC_SOCKOPT_CONFIG,
			uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&l)), 0)
		if e != 0 {
			gerr = e
		}
	})
	if gerr != nil {
		t.Fatalf("getsockopt QUIC_SOCKOPT_CONFIG: %v", gerr)
	}
	q, err := quicabi.UnmarshalConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestKernelQUICCongestionReadBack dials kernel QUIC with each algorithm the
// module has and reads the config back from the client's socket.
func TestKernelQUICCongestionReadBack(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for cc, want := range map[string]quicabi.CongAlgo{"reno": quicabi.QUIC_CONG_ALG_RENO, "cubic": quicabi.QUIC_CONG_ALG_CUBIC} {
		o := Options{Crypto: true, GSO: true, CC: cc, Window: 64 << 10}
		tr, _ := Get("kquic")
		ln, err := tr.Listen(ctx, loopback, o)
		if err != nil {
			t.Fatal(err)
		}
		d, err := tr.Dial(ctx, ln.Addr(), o)
		if err != nil {
			t.Fatal(err)
		}
		conn := d.(*kquicDialer).conn
		if got := quicConfig(t, conn).CongestionControlAlgo; got != want {
			t.Errorf("%s: the socket's congestion_control_algo is %v, want %v", cc, got, want)
		}
		tp, err := conn.TransportParameters()
		if err != nil {
			t.Fatal(err)
		}
		if tp.MaxStreamDataBidiRemote != 64<<10 || tp.MaxData != 64<<10 {
			t.Errorf("--window 64K: max_stream_data_bidi_remote %d, max_data %d", tp.MaxStreamDataBidiRemote, tp.MaxData)
		}
		d.Close()
		ln.Close()
	}
}
