package matrix

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// A Preset is a named set of a matrix's axes: what `kqbench matrix
// --preset NAME` sets, and what a program sets with Apply.
type Preset struct {
	// About says what the preset sets, for --preset's help, and Help is a
	// paragraph of kqbench matrix --help on it ("": none).
	Name, About, Help string
	Transports        []string
	Sizes, MTUs       []int
	GSO, Crypto       []bool
	Directions        []Direction
	Drivers           []Driver
	Mode              Mode
}

var (
	presetMu sync.RWMutex
	presets  = map[string]Preset{}
)

// RegisterPreset adds a preset (the native driver's lxin-readme). A name
// registered twice panics: it is a program's error, found at start.
func RegisterPreset(p Preset) {
	presetMu.Lock()
	defer presetMu.Unlock()
	if _, ok := presets[p.Name]; ok {
		panic(fmt.Sprintf("matrix: preset %q registered twice", p.Name))
	}
	presets[p.Name] = p
}

// Presets lists the registered presets' names.
func Presets() []string {
	presetMu.RLock()
	defer presetMu.RUnlock()
	var names []string
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// LookupPreset returns the preset called name, or an error that lists
// those there are.
func LookupPreset(name string) (Preset, error) {
	presetMu.RLock()
	p, ok := presets[name]
	presetMu.RUnlock()
	if ok {
		return p, nil
	}
	return Preset{}, fmt.Errorf("no preset %q: there is %s", name, strings.Join(Presets(), ", "))
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
