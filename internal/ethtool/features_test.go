//go:build linux

package ethtool_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"kquic.dev/internal/ethtool"
	"kquic.dev/internal/netns"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// TestFeatureByName switches veth's UDP segmentation offload, which has no
// legacy switch, off and on by name, each time as the ethtool program reads
// it; a feature the device lacks is an error naming it.
func TestFeatureByName(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	tool := testenv.Tool(t, "ethtool", "ethtool")
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
	const name = "tx-udp-segmentation"
	toolSays := func() string {
		var out strings.Builder
		cmd := exec.Command(tool, "-k", "et0")
		cmd.Stdout = &out
		if err := ns.Do(cmd.Run); err != nil {
			t.Fatalf("ethtool -k: %v", err)
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if v, ok := strings.CutPrefix(l, name+": "); ok {
				return strings.Fields(v)[0]
			}
		}
		t.Fatalf("ethtool -k lists no %s:\n%s", name, out.String())
		return ""
	}
	err = ns.Do(func() error {
		on, changeable, err := ethtool.Feature("et0", name)
		if err != nil {
			return err
		}
		if !on || !changeable {
			t.Errorf("veth %s: on %v, changeable %v; want both (veth offers UDP segmentation)", name, on, changeable)
		}
		for _, want := range []bool{false, true, false} {
			if err := ethtool.SetFeature("et0", name, want); err != nil {
				return err
			}
			got, _, err := ethtool.Feature("et0", name)
			if err != nil {
				return err
			}
			words := map[bool]string{true: "on", false: "off"}
			if got != want || toolSays() != words[want] {
				t.Errorf("set %s %v: read back %v, ethtool says %s", name, want, got, toolSays())
			}
		}
		if err := ethtool.SetFeature("et0", "no-such-feature", true); err == nil || !strings.Contains(err.Error(), "no-such-feature") {
			t.Errorf("an unknown feature: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
