package matrix

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Mode is what a matrix's cells measure (Spec.Mode, Cell.Mode). Its JSON
// form is the name, as results files have always spelled it. The modes
// register themselves (RegisterModeSpec); a spec of the default mode
// records it as "".
type Mode string

// Direction is which way a cell's bytes go (Spec.Directions,
// Cell.Direction).
type Direction string

// The directions (a mode may have others: the rr mode's cells go both
// ways).
const (
	Up   = Direction("up")   // client to server
	Down = Direction("down") // server to client
)

// A ModeSpec is the spec side of a mode: what its cells measure, its
// flags, the checks of a spec in the mode, the cells it enumerates and
// their keys, and its own part of a spec. A mode registers it
// (RegisterModeSpec) from a file that builds on every platform, so that
// every system reads, checks and plans its results.
type ModeSpec struct {
	// About says what a cell of the mode measures, for --mode's help, and
	// Help is a paragraph of kqbench matrix --help on the mode ("": none).
	About, Help string
	// Notes say what the mode makes of common flags, for their help
	// ("streams": "objects sent at once").
	Notes map[string]string
	// Default marks the mode of a spec whose Mode is "" (one mode is).
	Default bool
	// Validate checks a spec of the mode, naming every problem (nil:
	// DefaultChecks).
	Validate func(*Spec) []error
	// Cells enumerates the mode's cells (nil: DefaultCells).
	Cells func(*Spec) []Cell
	// Key is a cell's key before the suffixes every key has (nil:
	// DefaultKey).
	Key func(Cell) string
	// Flags are the mode's own flags (kqbench matrix --req-size); a flag
	// two modes have is one flag, which each reads.
	Flags []Flag
	// Apply sets the spec from the mode's flags once the common ones have
	// set theirs: the mode's fields, its defaults where a flag was not
	// given, and the refusal of a common flag that does not apply.
	Apply func(s *Spec, f Flags) error
	// Settings is the type of the mode's own part of a spec
	// (Spec.Settings).
	Settings *SettingsType
	// Metric is the figure a verdict on the mode's cells judges by
	// default (kqbench ab --metric; "": goodput).
	Metric string
}

// SettingsType is a mode's own part of a spec: saved under Key, made by
// New (a pointer) to decode into.
type SettingsType struct {
	Key string
	New func() any
}

// A Flag is a command-line flag of a mode's or a driver's own.
type Flag struct {
	Name, Usage string
	// Default is the value without the flag, as it is typed.
	Default string
	// List marks a flag of comma-separated items, which may be given
	// more than once; Int one of a whole number.
	List, Int bool
}

// Flags is what a mode's Apply reads of the command line.
type Flags interface {
	// Changed reports whether the flag (a common one or a mode's) was
	// given.
	Changed(name string) bool
	// Value is a mode's flag's value, its default when not given.
	Value(name string) string
	// List is a list flag's items.
	List(name string) []string
}

func (m ModeSpec) validate(s *Spec) []error {
	if m.Validate == nil {
		return s.DefaultChecks()
	}
	return m.Validate(s)
}

func (m ModeSpec) cells(s *Spec) []Cell {
	if m.Cells == nil {
		return s.DefaultCells()
	}
	return m.Cells(s)
}

var (
	modeMu    sync.RWMutex
	modeSpecs = map[Mode]ModeSpec{}
	// modeOrder is the order modes are listed in: as they came.
	modeOrder   []Mode
	defaultMode Mode
)

// RegisterModeSpec adds a mode's spec side. A name registered already, or
// a second default mode, is an error.
func RegisterModeSpec(name Mode, ms ModeSpec) error {
	if name == "" {
		return errors.New("matrix: a mode needs a name")
	}
	modeMu.Lock()
	defer modeMu.Unlock()
	if _, ok := modeSpecs[name]; ok {
		return fmt.Errorf("matrix: mode %q is registered already", name)
	}
	if ms.Default {
		if defaultMode != "" {
			return fmt.Errorf("matrix: mode %q: %q is the default mode already", name, defaultMode)
		}
		defaultMode = name
	}
	modeSpecs[name] = ms
	modeOrder = append(modeOrder, name)
	return nil
}

// ModeSpecOf is the spec side of the mode ("" is the default one); an
// error naming the modes there are for one that is not registered.
func ModeSpecOf(name Mode) (ModeSpec, error) {
	modeMu.RLock()
	defer modeMu.RUnlock()
	if name == "" {
		name = defaultMode
	}
	ms, ok := modeSpecs[name]
	if !ok {
		names := make([]string, len(modeOrder))
		for i, m := range modeOrder {
			names[i] = string(m)
		}
		return ModeSpec{}, fmt.Errorf("mode %q: use %s", name, strings.Join(names, ", "))
	}
	return ms, nil
}

// Modes lists the modes whose spec side is registered, the default one
// first.
func Modes() []Mode {
	modeMu.RLock()
	defer modeMu.RUnlock()
	out := slices.Clone(modeOrder)
	slices.SortStableFunc(out, func(a, b Mode) int {
		switch {
		case a == defaultMode:
			return -1
		case b == defaultMode:
			return 1
		}
		return 0
	})
	return out
}

// DefaultMode is the mode of a spec whose Mode is "" ("" when none is
// registered).
func DefaultMode() Mode {
	modeMu.RLock()
	defer modeMu.RUnlock()
	return defaultMode
}

// Named is m as a name: the default mode's for "".
func (m Mode) Named() Mode {
	if m == "" {
		return DefaultMode()
	}
	return m
}

// IsDefault reports whether m is the default mode ("" is).
func (m Mode) IsDefault() bool { return m == "" || m == DefaultMode() }
