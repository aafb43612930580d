//go:build linux

package main

import (
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/native"
)

// TestPresetFlags: --preset refuses a flag of its own given beside it,
// naming each, and an unknown preset lists those there are; a flag the
// preset does not set is no clash.
func TestPresetFlags(t *testing.T) {
	cmd := newMatrixCmd()
	if err := cmd.ParseFlags([]string{"--preset", "lxin-readme", "--time", "2s", "--netem", "mobile"}); err != nil {
		t.Fatal(err)
	}
	if p, err := checkPreset(cmd, "lxin-readme"); err != nil || p.Name != "lxin-readme" {
		t.Fatalf("--preset beside --time and --netem: %v", err)
	}
	cmd = newMatrixCmd()
	if err := cmd.ParseFlags([]string{"--preset", "lxin-readme", "--sizes", "1K", "--driver", "go"}); err != nil {
		t.Fatal(err)
	}
	_, err := checkPreset(cmd, "lxin-readme")
	if err == nil || !strings.Contains(err.Error(), "--driver, --sizes") {
		t.Errorf("the preset beside --sizes and --driver: %v, want both named", err)
	}
	if _, err := checkPreset(cmd, "nope"); err == nil || !strings.Contains(err.Error(), "lxin-readme") {
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
		{"auto", []matrix.Driver{matrix.DriverGo, native.Name}, matrix.ReadMessage},
		{"msg", nil, matrix.ReadMessage},
		{"64K", []matrix.Driver{native.Name}, 64 << 10},
	} {
		if got, err := parseReadSize(c.v, c.drivers); err != nil || got != c.want {
			t.Errorf("--read-size %s with drivers %v: %d, %v; want %d", c.v, c.drivers, got, err, c.want)
		}
	}
	if _, err := parseReadSize("lots", nil); err == nil || !strings.Contains(err.Error(), `"lots"`) {
		t.Errorf("--read-size lots: %v", err)
	}
}
