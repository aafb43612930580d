package matrix

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Driver is what moves a cell's bytes (Spec.Drivers, Cell.Driver).
type Driver string

// DriverGo measures this process's transports, through the Go bindings:
// the default, which a Cell records as "". The other drivers register
// themselves (RegisterDriver).
const DriverGo = Driver("go")

// A DriverSpec is the spec side of a driver other than this process's: a
// set of programs that measure cells of the same transports, whose columns
// stand beside the Go driver's.
type DriverSpec struct {
	// About says what measures each transport's cells, for --driver's
	// help, and Help is a paragraph of kqbench matrix --help on the
	// driver ("": none).
	About, Help string
	// Column is what the tables add to a transport's name in the
	// driver's columns ("(C)": "kquic(C)").
	Column string
	// Modes are the modes whose cells the driver measures (nil: every
	// mode).
	Modes []Mode
	// ReadMessage: beside the driver, receivers read the message size at
	// a time unless --read-size says otherwise, as its tools do.
	ReadMessage bool
	// Kernel: the driver's figure for kquic is the kernel's own (the
	// module's tools), which the tables set first.
	Kernel bool
	// Flags are the driver's own flags; Options makes the run's options
	// of them (where its programs are), given to its measuring.
	Flags   []Flag
	Options func(f Flags) (any, error)
	// Unencrypted says how a transport's unencrypted cells go with the
	// driver, for a table's title, given the tool its samples name ("":
	// not said).
	Unencrypted func(transport, tool string) string
	// Hint says how a run sets the driver's columns beside the Go
	// driver's, for the tables' notes.
	Hint string
}

var (
	driverMu    sync.RWMutex
	driverSpecs = map[Driver]DriverSpec{}
	driverOrder []Driver
)

// RegisterDriver adds a driver's spec side. A driver registered twice, or
// one named go, is an error.
func RegisterDriver(name Driver, d DriverSpec) error {
	driverMu.Lock()
	defer driverMu.Unlock()
	if _, ok := driverSpecs[name]; ok || name == DriverGo || name == "" {
		return fmt.Errorf("matrix: driver %q is registered already", name)
	}
	driverSpecs[name] = d
	driverOrder = append(driverOrder, name)
	return nil
}

// DriverSpecOf is the spec side of driver d (nothing for the Go driver);
// false for a driver that is not registered.
func DriverSpecOf(d Driver) (DriverSpec, bool) {
	if d == "" || d == DriverGo {
		return DriverSpec{}, true
	}
	driverMu.RLock()
	defer driverMu.RUnlock()
	ds, ok := driverSpecs[d]
	return ds, ok
}

// Drivers lists the drivers: go, then the registered ones.
func Drivers() []Driver {
	driverMu.RLock()
	defer driverMu.RUnlock()
	return append([]Driver{DriverGo}, driverOrder...)
}

// checkDrivers checks the spec's drivers: registered, and measuring its
// mode.
func (s *Spec) checkDrivers() []error {
	var errs []error
	for _, d := range s.Drivers {
		ds, ok := DriverSpecOf(d)
		if !ok {
			var names []string
			for _, n := range Drivers() {
				names = append(names, string(n))
			}
			errs = append(errs, fmt.Errorf("driver %q: use %s", d, strings.Join(names, " or ")))
			continue
		}
		if ds.Modes != nil && !slices.Contains(ds.Modes, s.Mode.Named()) {
			errs = append(errs, fmt.Errorf("driver %s measures %s mode's cells, not --mode %s", d, ds.Modes[0], s.Mode.Named()))
		}
	}
	return errs
}

// DriverAxis is Drivers, or the Go driver alone when empty.
func (s *Spec) DriverAxis() []Driver {
	if len(s.Drivers) == 0 {
		return []Driver{DriverGo}
	}
	return s.Drivers
}

// CellDriver is a driver as a Cell records it: empty for the Go driver.
func CellDriver(d Driver) Driver {
	if d == DriverGo {
		return ""
	}
	return d
}

// ColumnName is how tables and the CSV name a cell's column: the
// transport, with its driver's Column ("kquic(C)").
func (c Cell) ColumnName() string {
	ds, _ := DriverSpecOf(c.Driver)
	if c.Send != "" {
		return c.Transport + ds.Column + SendSeparator + c.Send
	}
	return c.Transport + ds.Column
}

// SendSeparator stands between a column's transport and its send method
// ("tcp+zerocopy").
const SendSeparator = "+"

// Columns are the tables' columns: each transport, and beside it its
// columns of the other drivers ("kquic", "kquic(C)") when the spec has
// them.
func (s *Spec) Columns() []string {
	var out []string
	for _, t := range s.Transports {
		for _, d := range s.DriverAxis() {
			for _, m := range s.SendAxis() {
				out = append(out, Cell{Transport: t, Driver: CellDriver(d), Send: m}.ColumnName())
			}
		}
	}
	return out
}

// ColumnCell is c in the column named col.
func ColumnCell(col string, c Cell) Cell {
	c.Send = ""
	if t, m, ok := strings.Cut(col, SendSeparator); ok {
		col, c.Send = t, m
	}
	c.Transport, c.Driver = col, ""
	driverMu.RLock()
	defer driverMu.RUnlock()
	for _, d := range driverOrder {
		if suf := driverSpecs[d].Column; suf != "" {
			if t, ok := strings.CutSuffix(col, suf); ok {
				c.Transport, c.Driver = t, d
				break
			}
		}
	}
	return c
}

// DriverName is a driver as the CSV names it.
func DriverName(d Driver) Driver {
	if d == "" {
		return DriverGo
	}
	return d
}

// KernelDriver is the driver whose kquic figure is the kernel's own
// (DriverSpec.Kernel), or "" when none is registered.
func KernelDriver() Driver {
	driverMu.RLock()
	defer driverMu.RUnlock()
	for _, d := range driverOrder {
		if driverSpecs[d].Kernel {
			return d
		}
	}
	return ""
}
