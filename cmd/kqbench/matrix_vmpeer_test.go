//go:build linux

package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"kquic.dev/bench/vmpeer"
)

// TestVMPeerFlags: --vm-peer passes the matrix flags the user set on to the
// guest's matrix, lists as lists, and none of the guests', the link's or
// those two-host mode sets itself.
func TestVMPeerFlags(t *testing.T) {
	cmd := newMatrixCmd()
	err := cmd.ParseFlags([]string{"--vm-peer", "--transports", "kquic,tcp", "--sizes", "4K", "--sizes", "64K", "--time", "2s",
		"--b-module", "none", "--link-mtu", "9000", "--module", "/x/quic.ko", "--cpus", "2", "--out", "r/m.json", "--explain"})
	if err != nil {
		t.Fatal(err)
	}
	got := vmPeerFlags(cmd)
	want := []string{"--explain=true", "--sizes=4K,64K", "--time=2s", "--transports=kquic,tcp"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("flags for guest A: %q, want %q", got, want)
	}
}

// TestVMPeerRefusesItsOwnFlags: a matrix flag that --vm-peer sets itself
// is an error that says so, before any guest boots.
func TestVMPeerRefusesItsOwnFlags(t *testing.T) {
	for _, a := range []string{"--peer=10.0.0.1:7070", "--token", "--dev=eth1", "--out=x.json"} {
		_, err := vmpeer.Run(context.Background(), vmpeer.Config{Args: []string{a}, Out: t.TempDir() + "/m.json"})
		if err == nil || !strings.Contains(err.Error(), "set by --vm-peer itself") {
			t.Errorf("%s: %v", a, err)
		}
	}
}
