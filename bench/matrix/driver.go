package matrix

import "strings"

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
// transport, with "(C)" for the native driver ("kquic(C)").
func (c Cell) ColumnName() string {
	if c.Driver == DriverNative {
		return c.Transport + "(C)"
	}
	return c.Transport
}

// Columns are the tables' columns: each transport, and beside it its
// native one ("kquic", "kquic(C)") when the spec has both drivers.
func (s *Spec) Columns() []string {
	var out []string
	for _, t := range s.Transports {
		for _, d := range s.DriverAxis() {
			out = append(out, Cell{Transport: t, Driver: CellDriver(d)}.ColumnName())
		}
	}
	return out
}

// ColumnCell is c in the column named col.
func ColumnCell(col string, c Cell) Cell {
	if t, ok := strings.CutSuffix(col, "(C)"); ok {
		c.Transport, c.Driver = t, DriverNative
	} else {
		c.Transport = col
	}
	return c
}

// DriverName is a cell's driver as the CSV names it.
func DriverName(d Driver) Driver {
	if d == "" {
		return DriverGo
	}
	return d
}
