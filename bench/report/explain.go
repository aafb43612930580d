package report

import (
	"fmt"
	"sort"
	"strings"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// ExplainTable is the --explain counters per MB delivered as the page
// draws them: the figures `kqbench report --explain` prints, a group of
// rows per cell setting (direction, size, MTU, GSO, encryption) with a row
// per transport, and only the columns some row has a value in.
type ExplainTable struct {
	Columns []ExplainColumn
	Groups  []ExplainGroup
	// Missing are the counters the run could not count, with the reason.
	Missing []string
}

// ExplainColumn is a column's heading: what it counts and its unit.
type ExplainColumn struct {
	Name, Unit string
	// Text marks a column of words (the places drops happened).
	Text bool
}

// ExplainGroup is the rows of one cell setting.
type ExplainGroup struct {
	Label string
	Rows  []ExplainRow
}

// ExplainRow is one transport's values, one per column ("-" for none).
type ExplainRow struct {
	Column string
	Key    string
	Values []string
}

// explainRow is one cell's means per MB over its samples, as
// render.WriteExplain computes them.
type explainRow struct {
	c results.CellResult
	render.PerMB
}

// explainTable lays out the counters of a default-mode document (nil when it
// has none, or is of another mode: its text is shown instead).
func explainTable(d *results.Document) *ExplainTable {
	if !d.Spec.Mode.IsDefault() {
		return nil
	}
	rows, missing := explainRows(d)
	if len(rows) == 0 {
		return nil
	}
	t := layoutExplain(rows, explainColumns())
	for m := range missing {
		t.Missing = append(t.Missing, m)
	}
	sort.Strings(t.Missing)
	return t
}

// explainGroup is the comparison group of a row: what its cells share but
// the transport and the driver.
func explainGroup(c results.CellResult) string {
	return fmt.Sprintf("%s/%d/%d/%v/%v/%d/%s/%s", c.Direction, c.Size, c.MTU, c.GSO, c.Crypto, c.Streams, c.CC, c.Netem)
}

// explainRows are the measured cells' means per MB, by group and then in
// the spec's transport order, and the counters some cell lacked.
func explainRows(d *results.Document) ([]explainRow, map[string]bool) {
	var rows []explainRow
	missing := map[string]bool{}
	for _, c := range d.Cells {
		if c.Status != results.StatusOK {
			continue
		}
		if p, ok := render.CellPerMB(c, missing); ok {
			rows = append(rows, explainRow{c: c, PerMB: p})
		}
	}
	order := map[string]int{}
	for i, t := range d.Spec.Transports {
		order[t] = i
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i].c, rows[j].c
		if ga, gb := explainGroup(a), explainGroup(b); ga != gb {
			return render.LessCell(a, b)
		}
		if a.Transport != b.Transport {
			return order[a.Transport] < order[b.Transport]
		}
		return a.Driver < b.Driver
	})
	return rows, missing
}

// explainCol is a column of the table and how a row's value is made
// (false: the row has none), base being its group's first row.
type explainCol struct {
	ExplainColumn
	value func(r, base *explainRow) (string, bool)
}

// explainColumns are the table's columns, in order.
func explainColumns() []explainCol {
	num := func(prec int, f func(r *explainRow) (float64, bool)) func(r, base *explainRow) (string, bool) {
		return func(r, _ *explainRow) (string, bool) {
			v, ok := f(r)
			if !ok {
				return "-", false
			}
			return fmt.Sprintf("%.*f", prec, v), true
		}
	}
	ratio := func(f func(r *explainRow) float64, own bool) func(r, base *explainRow) (string, bool) {
		return func(r, base *explainRow) (string, bool) {
			if own && (r.c.Driver != "" || !r.HasSys) || f(base) == 0 {
				return "-", false
			}
			return fmt.Sprintf("%.2f", f(r)/f(base)), true
		}
	}
	// The native driver's tools are other processes: no syscalls of theirs.
	own := func(r *explainRow) bool { return r.c.Driver == "" && r.HasSys }
	return []explainCol{
		{ExplainColumn{"goodput", "Mbit/s", false}, num(0, func(r *explainRow) (float64, bool) { return r.c.MedianBps / 1e6, true })},
		{ExplainColumn{"sender's packets", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.TxPkts, true })},
		{ExplainColumn{"receiver's packets", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.RxPkts, true })},
		{ExplainColumn{"sender's packets", "× the first", false}, ratio(func(r *explainRow) float64 { return r.TxPkts }, false)},
		{ExplainColumn{"I/O syscalls", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.IOSys, own(r) })},
		{ExplainColumn{"other syscalls", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.Sys - r.IOSys, own(r) })},
		{ExplainColumn{"I/O syscalls", "× the first", false}, ratio(func(r *explainRow) float64 { return r.IOSys }, true)},
		{ExplainColumn{"drops", "per MB", false}, num(2, func(r *explainRow) (float64, bool) { return r.Drops, true })},
		{ExplainColumn{"client CPU", "ms per MB", false}, num(1, func(r *explainRow) (float64, bool) { return r.ClientMs, r.HasEnds })},
		{ExplainColumn{"server CPU", "ms per MB", false}, num(1, func(r *explainRow) (float64, bool) { return r.ServerMs, r.HasServer })},
		{ExplainColumn{"cycles", "per byte", false}, num(1, func(r *explainRow) (float64, bool) { return r.CyclesPB, r.HasCycles })},
		{ExplainColumn{"wire packets", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.WirePkts, r.HasWire })},
		{ExplainColumn{"TCP ACK-only", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.AckOnly, r.HasWire })},
		{ExplainColumn{"where dropped", "end, reason@function: per MB", true}, func(r, _ *explainRow) (string, bool) {
			var ks []string
			for k := range r.DropsAt {
				ks = append(ks, k)
			}
			if len(ks) == 0 {
				return "-", false
			}
			sort.Slice(ks, func(i, j int) bool { return r.DropsAt[ks[i]] > r.DropsAt[ks[j]] })
			var out []string
			for _, k := range ks {
				out = append(out, fmt.Sprintf("%s: %.2f", k, r.DropsAt[k]))
			}
			return strings.Join(out, "; "), true
		}},
	}
}

// layoutExplain fills the table: the columns some row has a value in, and
// the rows under a label per group.
func layoutExplain(rows []explainRow, cols []explainCol) *ExplainTable {
	// The values, then the columns some row has.
	vals := make([][]string, len(rows))
	used := make([]bool, len(cols))
	var base *explainRow
	for i := range rows {
		r := &rows[i]
		if i == 0 || explainGroup(rows[i-1].c) != explainGroup(r.c) {
			base = r
		}
		for j, c := range cols {
			v, ok := c.value(r, base)
			vals[i] = append(vals[i], v)
			used[j] = used[j] || ok
		}
	}
	t := &ExplainTable{}
	for j, c := range cols {
		if used[j] {
			t.Columns = append(t.Columns, c.ExplainColumn)
		}
	}
	for i := range rows {
		c := rows[i].c
		if i == 0 || explainGroup(rows[i-1].c) != explainGroup(c) {
			label := fmt.Sprintf("%s, %s, MTU %d, GSO %s, %s", c.Direction, render.SizeName(c.Size), c.MTU, matrix.OnOff(c.GSO), map[bool]string{true: "encrypted", false: "unencrypted"}[c.Crypto])
			if c.Streams != 1 {
				label += fmt.Sprintf(", %d streams", c.Streams)
			}
			if c.CC != "" {
				label += ", cc " + c.CC
			}
			if c.Netem != "" {
				label += ", link " + c.Netem
			}
			t.Groups = append(t.Groups, ExplainGroup{Label: label})
		}
		row := ExplainRow{Column: c.ColumnName(), Key: c.Key}
		for j := range cols {
			if used[j] {
				row.Values = append(row.Values, vals[i][j])
			}
		}
		g := &t.Groups[len(t.Groups)-1]
		g.Rows = append(g.Rows, row)
	}
	return t
}
