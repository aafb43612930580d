//go:build linux

package web

import (
	"context"
	"testing"
	"time"

	"kquic.dev/bench/topo"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kmod/vm"
)

// TestWindowLimitsDownload puts a 100 ms round trip on the guest's loopback
// (netem on lo, so only inside a guest) and downloads over each transport
// with a 16 KiB stream window, which caps goodput at window/RTT, and with a
// 16 MiB one, which does not.
func TestWindowLimitsDownload(t *testing.T) {
	if !vm.InGuest() {
		t.Skip("puts netem on the loopback device: only in a guest (kqbench vm --load tls,sch_netem)")
	}
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureNetem)
	const rtt = 100 * time.Millisecond
	lo, err := topo.OpenDevice("lo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lo.Close()
	if err := lo.SetNetem(topo.Netem{Delay: rtt}, 2); err != nil { // lo's egress is both ways
		t.Fatal(err)
	}
	defer lo.SetNetem(topo.Netem{}, 1)
	const small, size = 16 << 10, 512 << 10
	limit := float64(small) / rtt.Seconds()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			goodput := func(window int64) float64 {
				_, c := tr.start(t, Config{StreamWindow: window, ConnWindow: max(window, 1<<20)})
				if c.Settings.StreamWindow != window {
					t.Fatalf("client settings %+v: stream window %d, asked %d", c.Settings, c.Settings.StreamWindow, window)
				}
				r, err := Download(ctx, c, size)
				if err != nil {
					t.Fatal(err)
				}
				return r.Goodput()
			}
			g := goodput(small)
			t.Logf("16 KiB window: %.3f MB/s (window/RTT %.3f MB/s)", g/1e6, limit/1e6)
			if g > limit*1.15 {
				t.Errorf("16 KiB window over a %v round trip: %.3f MB/s, above window/RTT %.3f MB/s", rtt, g/1e6, limit/1e6)
			}
			big := goodput(16 << 20)
			t.Logf("16 MiB window: %.3f MB/s", big/1e6)
			if big < 1.2*limit {
				t.Errorf("16 MiB window: %.3f MB/s, not above the 16 KiB window's cap %.3f MB/s", big/1e6, limit/1e6)
			}
		})
	}
}
