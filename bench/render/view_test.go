package render_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// The view of a test mode: a table of its own, the goodput CSV with a
// column added, and the goodput explanation.
func init() {
	if err := matrix.RegisterModeSpec("viewtest", matrix.ModeSpec{About: "a view's test"}); err != nil {
		panic(err)
	}
	render.RegisterView("viewtest", render.View{
		Tables: func(w io.Writer, d *results.Document) error {
			for _, c := range d.Cells {
				fmt.Fprintf(w, "viewtest %s: %s\n", c.Key, render.FigureText(d, c.Cell, func(r *results.CellResult) (float64, bool) { return r.MedianBps, true }))
			}
			return nil
		},
		Columns: &render.Columns{Head: []string{"doubled"}, Row: func(c results.CellResult) []string {
			return []string{fmt.Sprint(2 * c.MedianBps)}
		}},
	})
}

// TestRegisteredView: the tables and CSV of a document come from its
// mode's view where it has a part, from the goodput view where not.
func TestRegisteredView(t *testing.T) {
	c := matrix.Cell{Transport: "tcp", Size: 1, MTU: 1500, Direction: matrix.Up, Streams: 1}
	d := &results.Document{Schema: results.SchemaVersion, Spec: matrix.Spec{Mode: "viewtest", Transports: []string{"tcp"}, Repeat: 1},
		Cells: []results.CellResult{{Cell: c, Key: c.Key(), Status: results.StatusOK, MedianBps: 21}}}
	var b bytes.Buffer
	if err := render.WriteTables(&b, d); err != nil {
		t.Fatal(err)
	}
	if b.String() != "viewtest "+c.Key()+": 21\n" {
		t.Errorf("tables:\n%s", b.String())
	}
	b.Reset()
	if err := render.WriteCSV(&b, d); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], ",error,doubled") || !strings.HasSuffix(lines[1], ",42") {
		t.Errorf("CSV:\n%s", b.String())
	}
	b.Reset()
	if err := render.WriteExplain(&b, d); err != nil || !strings.Contains(b.String(), "no counters in these results") {
		t.Errorf("explain (%v):\n%s", err, b.String())
	}
}
