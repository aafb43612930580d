package native_test

import (
	"slices"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/native"
)

// TestPresetLxinReadme: the preset sets the module README's axes, both
// drivers, and nothing else of the spec; its cells validate.
func TestPresetLxinReadme(t *testing.T) {
	s := matrix.DefaultSpec()
	s.Netem, s.Repeat = "mobile", 7
	p, err := matrix.LookupPreset("lxin-readme")
	if err != nil {
		t.Fatal(err)
	}
	p.Apply(&s)
	if !slices.Equal(s.Transports, []string{"kquic", "ktls", "tcp"}) || !slices.Equal(s.Sizes, []int{1024, 4096, 16384, 65536}) ||
		!slices.Equal(s.MTUs, []int{1500, 9000}) || !slices.Equal(s.GSO, []bool{true, false}) || !slices.Equal(s.Crypto, []bool{true, false}) ||
		!slices.Equal(s.Directions, []matrix.Direction{matrix.Up}) || !slices.Equal(s.Drivers, []matrix.Driver{matrix.DriverGo, native.Name}) {
		t.Errorf("the preset's axes: %+v", s)
	}
	if s.Netem != "mobile" || s.Repeat != 7 {
		t.Errorf("Apply changed what the preset does not set: netem %q, repeat %d", s.Netem, s.Repeat)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// Both tables, both drivers: 3 transports, 4 sizes, 2 MTUs, GSO and
	// encryption on and off, 2 drivers.
	if n := len(s.Cells()); n != 3*4*2*2*2*2 {
		t.Errorf("%d cells, want 192", n)
	}
	s.Sizes[0] = 1
	if native.LxinReadme.Sizes[0] != 1024 {
		t.Error("Apply shares the preset's slices with the spec")
	}
	if _, err := matrix.LookupPreset("nope"); err == nil || !strings.Contains(err.Error(), "lxin-readme") {
		t.Errorf("an unknown preset: %v, want the presets listed", err)
	}
}
