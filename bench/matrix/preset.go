package matrix

import (
	"fmt"
	"slices"
	"strings"
)

// A Preset is a named set of a matrix's axes: what `kqbench matrix
// --preset NAME` sets, and what a program sets with Apply.
type Preset struct {
	Name, About string
	Transports  []string
	Sizes, MTUs []int
	GSO, Crypto []bool
	Directions  []Direction
	Drivers     []Driver
	Mode        Mode
}

// LxinReadme is the kernel QUIC module's README tables (lxin/quic,
// "performance tests with iperf"): QUIC | kTLS and QUIC without 1-RTT
// encryption | TCP, 1 to 64 KiB, MTU 1500 and 9000, with TCP's and kTLS's
// GSO off again; the kernel's figure (the native driver: the module
// author's iperf3 fork, else perf_test) beside the Go bindings'. The
// ratios the README's readers compute follow the tables
// (render.WriteRatios).
var LxinReadme = Preset{
	Name:       "lxin-readme",
	About:      "the kernel QUIC module README's tables: kquic, ktls, tcp; 1-64 KiB; MTU 1500, 9000; GSO and encryption on and off; both drivers",
	Transports: []string{"kquic", "ktls", "tcp"},
	Sizes:      []int{1 << 10, 4 << 10, 16 << 10, 64 << 10},
	MTUs:       []int{1500, 9000},
	GSO:        []bool{true, false},
	Crypto:     []bool{true, false},
	Directions: []Direction{Up},
	Drivers:    []Driver{DriverGo, DriverNative},
	Mode:       "bulk",
}

// Presets are the presets by name.
var Presets = map[string]Preset{LxinReadme.Name: LxinReadme}

// LookupPreset returns the preset called name, or an error that lists
// those there are.
func LookupPreset(name string) (Preset, error) {
	if p, ok := Presets[name]; ok {
		return p, nil
	}
	var names []string
	for n := range Presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return Preset{}, fmt.Errorf("no preset %q: there is %s", name, strings.Join(names, ", "))
}

// PresetFlags are the kqbench matrix flags a preset sets: given beside
// --preset, one of them would be overridden, so the command refuses it.
var PresetFlags = []string{"transports", "sizes", "mtus", "gso", "crypto", "direction", "driver", "mode"}

// Apply sets the preset's axes on s, and leaves the rest of s (time,
// repeats, netem, ...) as it is.
func (p Preset) Apply(s *Spec) {
	s.Transports = slices.Clone(p.Transports)
	s.Sizes, s.MTUs = slices.Clone(p.Sizes), slices.Clone(p.MTUs)
	s.GSO, s.Crypto = slices.Clone(p.GSO), slices.Clone(p.Crypto)
	s.Directions, s.Drivers = slices.Clone(p.Directions), slices.Clone(p.Drivers)
	s.Mode = p.Mode
}
