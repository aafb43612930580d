//go:build linux

package ethtool_test

import (
	"bytes"
	"errors"
	"os/exec"
	"strconv"
	"strings"
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

// TestDeviceInfoMatchesEthtool reads a veth device's driver, channels,
// rings and coalescing and checks each against the ethtool program: the
// same values, or ErrNotSupported where ethtool says the driver has none.
func TestDeviceInfoMatchesEthtool(t *testing.T) {
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
	// run runs ethtool in the namespace and returns its "Key: value" lines
	// (the last of each key), or ok false when it says "not supported".
	run := func(flag string) (map[string]string, bool) {
		var out bytes.Buffer
		cmd := exec.Command(tool, flag, "et0")
		cmd.Stdout, cmd.Stderr = &out, &out
		err := ns.Do(func() error { return cmd.Run() })
		if strings.Contains(out.String(), "not supported") {
			return nil, false
		}
		if err != nil {
			t.Fatalf("ethtool %s: %v: %s", flag, err, out.String())
		}
		kv := map[string]string{}
		for _, l := range strings.Split(out.String(), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		return kv, true
	}
	num := func(kv map[string]string, k string) int {
		n, err := strconv.Atoi(kv[k])
		if err != nil {
			return 0 // ethtool prints "n/a" for an unreported count
		}
		return n
	}
	err = ns.Do(func() error {
		d, err := ethtool.GetDriverInfo("et0")
		if err != nil {
			return err
		}
		kv, _ := run("-i")
		if d.Driver != "veth" || d.Driver != kv["driver"] || d.Version != kv["version"] || d.BusInfo != kv["bus-info"] {
			t.Errorf("driver info %+v, ethtool -i says %v", d, kv)
		}
		ch, err := ethtool.GetChannels("et0")
		if kv, ok := run("-l"); !ok {
			if !errors.Is(err, ethtool.ErrNotSupported) {
				t.Errorf("channels: ethtool says not supported, GetChannels = %+v, %v", ch, err)
			}
		} else if err != nil {
			t.Errorf("channels: %v", err)
		} else if ch.RX != num(kv, "RX") || ch.TX != num(kv, "TX") || ch.Combined != num(kv, "Combined") || ch.RX < 1 {
			t.Errorf("channels %+v, ethtool -l says %v", ch, kv)
		}
		r, err := ethtool.GetRings("et0")
		if kv, ok := run("-g"); !ok {
			if !errors.Is(err, ethtool.ErrNotSupported) {
				t.Errorf("rings: ethtool says not supported, GetRings = %+v, %v", r, err)
			}
		} else if err != nil || r.RX != num(kv, "RX") || r.TX != num(kv, "TX") {
			t.Errorf("rings %+v, %v; ethtool -g says %v", r, err, kv)
		}
		c, err := ethtool.GetCoalesce("et0")
		if kv, ok := run("-c"); !ok {
			if !errors.Is(err, ethtool.ErrNotSupported) {
				t.Errorf("coalescing: ethtool says not supported, GetCoalesce = %+v, %v", c, err)
			}
		} else if err != nil || c.RXUsecs != num(kv, "rx-usecs") || c.TXUsecs != num(kv, "tx-usecs") {
			t.Errorf("coalescing %+v, %v; ethtool -c says %v", c, err, kv)
		}
		t.Logf("driver %+v, channels %+v, rings %+v, coalescing %+v", d, ch, r, c)
		if _, err := ethtool.GetDriverInfo("nonexistent0"); err == nil {
			t.Error("GetDriverInfo on a missing device succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
