package render

import (
	"fmt"
	"io"
	"sync"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

// A View is how a mode's results read: its tables, its CSV summary and its
// explanation (--explain). A part left nil is the goodput view's: the
// tables in the shape of the kernel QUIC module's README
// (WriteGoodputTables), the CSV of every cell's common figures, and the
// counters per MB delivered. A mode registers its view (RegisterView) from
// a file that builds on every platform.
type View struct {
	// Tables writes the mode's tables, after the line that says what the
	// two ends were; a run of several congestion controls gets them once
	// per congestion control.
	Tables func(w io.Writer, d *results.Document) error
	// CSV writes the mode's CSV summary.
	CSV func(w io.Writer, d *results.Document) error
	// Columns adds the mode's columns to the goodput CSV (when CSV is
	// nil), after the common ones.
	Columns *Columns
	// Explain writes what the mode's cells cost and what held them back.
	Explain func(w io.Writer, d *results.Document) error
}

// Columns are CSV columns a mode adds: their heads, and a cell's values.
type Columns struct {
	Head []string
	Row  func(c results.CellResult) []string
	// For reports whether a document gets the columns (nil: every one):
	// a mode whose columns come with a setting leaves the CSV of a run
	// without it as it was.
	For func(d *results.Document) bool
}

// columnsFor are the mode's columns of d, nil where it has none for d.
func (v View) columnsFor(d *results.Document) *Columns {
	if v.Columns == nil || (v.Columns.For != nil && !v.Columns.For(d)) {
		return nil
	}
	return v.Columns
}

var (
	viewMu sync.RWMutex
	views  = map[matrix.Mode]View{}
)

// RegisterView adds a mode's view. A mode registered twice panics: it is a
// program's error, found at start.
func RegisterView(m matrix.Mode, v View) {
	viewMu.Lock()
	defer viewMu.Unlock()
	if _, ok := views[m]; ok {
		panic(fmt.Sprintf("render: view of mode %q registered twice", m))
	}
	views[m] = v
}

// viewOf is the view of the mode of d (the goodput view's parts for a
// mode without one).
func viewOf(d *results.Document) View {
	viewMu.RLock()
	defer viewMu.RUnlock()
	return views[d.Spec.Mode.Named()]
}
