//go:build linux

package ethtool_test

import (
	"testing"

	"github.com/vishvananda/netlink"

	"kquic.dev/internal/ethtool"
	"kquic.dev/internal/netns"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

func TestSwitchOffloadsOnVeth(t *testing.T) {
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
	err = ns.Do(func() error {
		for _, o := range []ethtool.Offload{ethtool.TSO, ethtool.GSO, ethtool.GRO} {
			for _, want := range []bool{false, true, false} {
				if err := ethtool.Set("et0", o, want); err != nil {
					return err
				}
				got, err := ethtool.Get("et0", o)
				if err != nil {
					return err
				}
				if got != want {
					t.Errorf("%s: set %v, read back %v", o.Name, want, got)
				}
			}
		}
		if _, err := ethtool.Get("nonexistent0", ethtool.GSO); err == nil {
			t.Error("Get on a missing device succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
