package main

import (
	"slices"
	"strings"
	"testing"
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
