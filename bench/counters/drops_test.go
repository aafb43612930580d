//go:build linux

package counters

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDropLocation: datagrams to a port nobody listens on are dropped by
// the receiver's UDP code with reason NO_SOCKET, and datagrams to a socket
// whose receive buffer is full with SOCKET_RCVBUFF: each counted under its
// reason and under the UDP function that freed it, named from kallsyms.
func TestDropLocation(t *testing.T) {
	tp := newTopo(t, false)
	const port, closed, n, size = 4438, 4439, 40, 1000
	cfd, sfd := udpPair(t, tp, port)
	sendN(t, tp, cfd, port, 1, size, 0) // resolve ARP before counting
	receiveOne(t, tp, sfd)
	// A receive buffer of one datagram: the rest of a burst is dropped.
	err := tp.Server.Do(func() error { return unix.SetsockoptInt(sfd, unix.SOL_SOCKET, unix.SO_RCVBUF, 1) })
	if err != nil {
		t.Fatal(err)
	}
	s := startSet(t, tp)
	if why, ok := s.missing["drops"]; ok {
		s.Stop()
		t.Fatalf("drops not counted: %s", why)
	}
	sendN(t, tp, cfd, closed, n, size, 0)
	sendN(t, tp, cfd, port, n, size, 0)
	r, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if why, ok := r.Missing["drops.where"]; ok {
		t.Fatalf("drop locations not named: %s", why)
	}
	sv := r.Ends[1]
	for _, d := range sv.DropSites {
		t.Logf("server drop: %d × %s at %s (%#x)", d.Count, d.Reason, d.Site, d.Location)
	}
	flat := r.Flat()
	for _, tc := range []struct {
		reason string
		min    uint64
	}{{"NO_SOCKET", n}, {"SOCKET_RCVBUFF", n / 2}} {
		if got := sv.Drops[tc.reason]; got < tc.min || got > n {
			t.Errorf("server %s drops %d, want %d..%d", tc.reason, got, tc.min, n)
		}
		var at uint64
		for _, d := range sv.DropSites {
			if d.Reason != tc.reason {
				continue
			}
			at += d.Count
			if d.Site.Func == "" || !strings.Contains(d.Site.Func, "udp") || d.Site.Module != "" {
				t.Errorf("%s drop at %#x named %q: want a function of the kernel's UDP code", tc.reason, d.Location, d.Site)
			}
			if k := "server.drop." + tc.reason + "@" + d.Site.Func; flat[k] < float64(d.Count) {
				t.Errorf("Flat %s = %v, want at least %d", k, flat[k], d.Count)
			}
		}
		if at != sv.Drops[tc.reason] {
			t.Errorf("%s: %d drops by place, %d by reason", tc.reason, at, sv.Drops[tc.reason])
		}
		if flat["server.drop."+tc.reason] != float64(sv.Drops[tc.reason]) {
			t.Errorf("Flat server.drop.%s = %v, want %d (the name by reason kept)", tc.reason, flat["server.drop."+tc.reason], sv.Drops[tc.reason])
		}
	}
}

// TestScanKallsyms names addresses in the kernel image and in a module, and
// says so when kallsyms hides its addresses.
func TestScanKallsyms(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/kallsyms"
	os.WriteFile(p, []byte("ffffffff81000000 T _stext\nffffffff81000100 t udp_rcv\nffffffff81000200 D some_data\nffffffffc0001000 t quic_packet_rcv\t[quic]\nffffffffc0001400 t quic_other\t[quic]\n"), 0o644)
	got, err := scanKallsyms(p, []uint64{0xffffffff81000123, 0xffffffff81000234, 0xffffffffc00013ff, 0x10})
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]Site{
		0xffffffff81000123: {"udp_rcv", "", 0x23},
		0xffffffff81000234: {"udp_rcv", "", 0x134}, // data symbols are not functions
		0xffffffffc00013ff: {"quic_packet_rcv", "quic", 0x3ff},
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for a, w := range want {
		if got[a] != w {
			t.Errorf("%#x: %+v, want %+v", a, got[a], w)
		}
	}
	os.WriteFile(p, []byte("0000000000000000 T _stext\n0000000000000000 t udp_rcv\n"), 0o644)
	if _, err := scanKallsyms(p, []uint64{1}); err == nil || !strings.Contains(err.Error(), "kptr_restrict") {
		t.Errorf("hidden addresses: err %v, want one naming kptr_restrict", err)
	}
}
