package kquic

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseListeners(t *testing.T) {
	in := "SOCK\tSTATE\tLOCAL_ADDRESS\tUDP_ADDRESS\tUID\tINODE\n" +
		"00000000b1a2c3d4\t10\t127.0.0.1:4433\t127.0.0.1:4433\t0\t1234\n" +
		"00000000b1a2c3d5\t10\t::1:8443\t::1:8443\t0\t1235\n" +
		"00000000b1a2c3d6\t10\t0.0.0.0:9000\t0.0.0.0:9000\t0\t1236\n"
	lns, err := ParseListeners(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"127.0.0.1:4433", "[::1]:8443", "0.0.0.0:9000"}
	if len(lns) != len(want) {
		t.Fatalf("listeners %v, want %v", lns, want)
	}
	for i, w := range want {
		if lns[i].String() != w {
			t.Errorf("listener %d: %v, want %s", i, lns[i], w)
		}
	}
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:4433", true},
		{"127.0.0.2:4433", false},
		{"127.0.0.1:4434", false},
		{"[::1]:8443", true},
		{"127.0.0.1:8443", false},
		{"10.1.2.3:9000", true},          // the unspecified address of its family
		{"[::ffff:10.1.2.3]:9000", true}, // a mapped IPv4 address is IPv4
		{"[2001:db8::1]:9000", false},
	} {
		if got := listensFor(lns, netip.MustParseAddrPort(tc.addr)); got != tc.want {
			t.Errorf("listening for %s: %v, want %v", tc.addr, got, tc.want)
		}
	}
	for _, bad := range []string{"x\t10\n", "x\t10\t127.0.0.1\n", "x\t10\tnothost:1\n", "x\t10\t127.0.0.1:99999\n"} {
		if _, err := ParseListeners(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), EndpointsPath) {
			t.Errorf("%q: %v, want an error naming %s", bad, err, EndpointsPath)
		}
	}
}
