//go:build linux

package main

import (
	"slices"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
)

// TestPresetLxinReadme: --preset lxin-readme sets the module README's axes
// and both drivers, and refuses a flag of its own given beside it.
func TestPresetLxinReadme(t *testing.T) {
	cmd := newMatrixCmd()
	if err := cmd.ParseFlags([]string{"--preset", "lxin-readme", "--time", "2s"}); err != nil {
		t.Fatal(err)
	}
	if err := applyPreset(cmd, "lxin-readme"); err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string][]string{
		"transports": {"kquic", "ktls", "tcp"}, "sizes": {"1K", "4K", "16K", "64K"}, "mtus": {"1500", "9000"},
		"gso": {"on", "off"}, "crypto": {"on", "off"}, "direction": {"up"}, "driver": {"go", "native"},
	} {
		got, err := cmd.Flags().GetStringSlice(flag)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("--%s = %v (%v), want %v", flag, got, err, want)
		}
	}
	if got, _ := cmd.Flags().GetDuration("time"); got.String() != "2s" {
		t.Errorf("--time %v: a flag the preset does not set was changed", got)
	}

	cmd = newMatrixCmd()
	if err := cmd.ParseFlags([]string{"--preset", "lxin-readme", "--sizes", "1K", "--driver", "go"}); err != nil {
		t.Fatal(err)
	}
	err := applyPreset(cmd, "lxin-readme")
	if err == nil || !strings.Contains(err.Error(), "--driver, --sizes") {
		t.Errorf("the preset beside --sizes and --driver: %v, want both named", err)
	}
	if err := applyPreset(cmd, "nope"); err == nil || !strings.Contains(err.Error(), "lxin-readme") {
		t.Errorf("an unknown preset: %v, want the presets listed", err)
	}
}

// TestParseReadSize: auto reads the message size beside the native driver
// (as iperf3 -l does) and keeps the default otherwise; msg and sizes as
// given; anything else is refused by name.
func TestParseReadSize(t *testing.T) {
	for _, c := range []struct {
		v       string
		drivers []matrix.Driver
		want    int
	}{
		{"auto", nil, 0},
		{"auto", []matrix.Driver{matrix.DriverGo, matrix.DriverNative}, matrix.ReadMessage},
		{"msg", nil, matrix.ReadMessage},
		{"64K", []matrix.Driver{matrix.DriverNative}, 64 << 10},
	} {
		if got, err := parseReadSize(c.v, c.drivers); err != nil || got != c.want {
			t.Errorf("--read-size %s with drivers %v: %d, %v; want %d", c.v, c.drivers, got, err, c.want)
		}
	}
	if _, err := parseReadSize("lots", nil); err == nil || !strings.Contains(err.Error(), `"lots"`) {
		t.Errorf("--read-size lots: %v", err)
	}
}
