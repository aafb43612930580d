package interop

import (
	"net"
	"testing"
	"time"
)

// A delayed link keeps the order of the datagrams (the runner's simulator
// does): longrtt's server flight, an Initial and a Handshake datagram sent
// back to back, must not swap.
func TestRelayDelayKeepsOrder(t *testing.T) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r, err := NewRelay(srv.LocalAddr().(*net.UDPAddr), Impairment{Delay: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := net.DialUDP("udp", nil, r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 200
	start := time.Now()
	for i := range n {
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 16)
	srv.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i := range n {
		m, _, err := srv.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		if i == 0 && time.Since(start) < 30*time.Millisecond {
			t.Errorf("the first datagram came after %v, before the link's delay", time.Since(start))
		}
		if m != 1 || buf[0] != byte(i) {
			t.Fatalf("datagram %d came as the %dth", buf[0], i)
		}
	}
}
