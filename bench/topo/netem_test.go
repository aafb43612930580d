//go:build linux

package topo

import (
	"net"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// connectTime is how long a TCP handshake from the client namespace to a
// listener in the server namespace takes: one round trip.
func connectTime(t *testing.T, tp *Topology) time.Duration {
	t.Helper()
	var ln net.Listener
	if err := tp.Server.Do(func() (err error) {
		ln, err = net.Listen("tcp", ServerAddr.String()+":0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	best := time.Hour
	for range 3 {
		var d time.Duration
		if err := tp.Client.Do(func() error {
			start := time.Now()
			c, err := net.Dial("tcp", ln.Addr().String())
			d = time.Since(start)
			if err == nil {
				c.Close()
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		best = min(best, d)
	}
	return best
}

// TestNetemOnVeth puts a delay on the pair and finds it in the round trip
// and in the qdisc the kernel reports, then takes it off again.
func TestNetemOnVeth(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureNetem)
	tp, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	base := connectTime(t, tp)
	n, err := ParseNetem("delay=40ms,loss=0.5%,rate=500mbit")
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.SetNetem(n); err != nil {
		t.Fatal(err)
	}
	for _, d := range tp.devices() {
		q, err := d.Netem()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"delay 20000us", "loss 0.50%", "rate 500000000 bit/s", "limit 100000"} {
			if !strings.Contains(q, want) {
				t.Errorf("%s: %q, want %q in it", d.Name(), q, want)
			}
		}
	}
	delayed := connectTime(t, tp)
	t.Logf("TCP connect: %v without netem, %v with a 40 ms round trip", base, delayed)
	if delayed < 40*time.Millisecond {
		t.Errorf("connect took %v with a 40 ms round trip on the link", delayed)
	}
	if err := tp.SetNetem(Netem{}); err != nil {
		t.Fatal(err)
	}
	if q, _ := tp.ClientDevice().Netem(); q != "" {
		t.Errorf("after removal: %q", q)
	}
	if err := tp.SetNetem(Netem{}); err != nil {
		t.Errorf("removing twice: %v", err)
	}
	if after := connectTime(t, tp); after >= 40*time.Millisecond {
		t.Errorf("connect took %v after the delay was removed", after)
	}
}
