//go:build linux

package ethtool_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"kquic.dev/internal/ethtool"
	"kquic.dev/internal/netns"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// On a veth pair: its statistics are what `ethtool -S` lists (the
// per-queue counters among them), and RSS, which veth has not, is
// ErrNotSupported.
func TestStatsAndRSSOnVeth(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	ns, err := netns.New()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, _ := ns.Netlink()
	defer h.Close()
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "et0"}, PeerName: "et1"}); err != nil {
		t.Fatal(err)
	}
	const dev = "et0"
	err = ns.Do(func() error {
		st, err := ethtool.GetStats(dev)
		if err != nil {
			return err
		}
		if _, ok := st["rx_queue_0_xdp_packets"]; !ok {
			t.Errorf("veth's statistics lack rx_queue_0_xdp_packets: %v", st)
		}
		if p, err := exec.LookPath("ethtool"); err == nil {
			out, err := exec.Command(p, "-S", dev).Output()
			if err != nil {
				return err
			}
			lines := 0
			for _, l := range strings.Split(string(out), "\n") {
				name, _, ok := strings.Cut(strings.TrimSpace(l), ":")
				if !ok || strings.HasPrefix(l, "NIC statistics") {
					continue
				}
				lines++
				if _, ok := st[name]; !ok {
					t.Errorf("ethtool -S lists %q, GetStats has not", name)
				}
			}
			if lines != len(st) {
				t.Errorf("ethtool -S lists %d statistics, GetStats %d", lines, len(st))
			}
		} else {
			t.Logf("no ethtool program to check against: %v", err)
		}
		if _, err := ethtool.GetRSS(dev); !errors.Is(err, ethtool.ErrNotSupported) {
			t.Errorf("veth's RSS: %v, want ErrNotSupported", err)
		}
		if _, err := ethtool.GetFlowHash(dev, ethtool.FlowTCP4); !errors.Is(err, ethtool.ErrNotSupported) {
			t.Errorf("veth's flow hash: %v, want ErrNotSupported", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
