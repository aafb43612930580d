package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// GoodputTable is one goodput table of a default-mode run as the page draws it: the
// module README's table turned on its side so that it fits a page however
// many transports a run has. Message sizes go across; down, a group of
// rows per MTU and GSO setting, in it a row per column of the text tables
// (a transport, by the Go driver or the native one, "kquic(C)").
type GoodputTable struct {
	// Title says what the table holds (direction, encryption, ...).
	Title  string
	Sizes  []string
	Groups []RowGroup
}

// RowGroup is the rows of one MTU and GSO setting.
type RowGroup struct {
	Label string
	Rows  []GoodputRow
}

// GoodputRow is one transport's cells, one per size.
type GoodputRow struct {
	Column string
	Cells  []TableCell
}

// TableCell is one value of a table: its text, a longer explanation for a
// tooltip, a class for its style ("ok", "wide", "na", "fail", "none") and
// the key of the cell it shows ("" for none).
type TableCell struct {
	Text, Title, Class, Key string
}

// tableKey is what splits a default-mode run's cells into tables.
type tableKey struct {
	dir     string
	crypto  bool
	cc      string
	netem   string
	streams int
	mux     bool
}

// goodputTables lays out a default-mode document's cells; nil for the other
// modes (their text tables are shown as they are).
func goodputTables(d *results.Document) []GoodputTable {
	if !d.Spec.Mode.IsDefault() {
		return nil
	}
	byKey := map[tableKey][]results.CellResult{}
	for _, c := range d.Cells {
		k := tableKey{string(c.Direction), c.Crypto, c.CC, c.Netem, c.Streams, c.Mux}
		byKey[k] = append(byKey[k], c)
	}
	var keys []tableKey
	for k := range byKey {
		keys = append(keys, k)
	}
	dirIdx := func(dir string) int {
		if i := slices.Index(d.Spec.Directions, matrix.Direction(dir)); i >= 0 {
			return i
		}
		return len(d.Spec.Directions)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		switch {
		case a.dir != b.dir:
			return dirIdx(a.dir) < dirIdx(b.dir)
		case a.crypto != b.crypto:
			return a.crypto
		case a.cc != b.cc:
			return a.cc < b.cc
		case a.netem != b.netem:
			return a.netem < b.netem
		case a.streams != b.streams:
			return a.streams < b.streams
		}
		return !a.mux && b.mux
	})
	var out []GoodputTable
	for _, k := range keys {
		if t, ok := goodputTable(d, k, byKey[k]); ok {
			out = append(out, t)
		}
	}
	return out
}

func goodputTable(d *results.Document, k tableKey, cells []results.CellResult) (GoodputTable, bool) {
	// The columns with a cell that is not n/a, in the tables' order.
	has := map[string]bool{}
	var sizes []int
	type setting struct {
		mtu int
		gso bool
	}
	var settings []setting
	at := map[string]results.CellResult{} // column/size/mtu/gso
	for _, c := range cells {
		if c.Status != results.StatusNA {
			has[c.ColumnName()] = true
		}
		if !slices.Contains(sizes, c.Size) {
			sizes = append(sizes, c.Size)
		}
		if s := (setting{c.MTU, c.GSO}); !slices.Contains(settings, s) {
			settings = append(settings, s)
		}
		at[fmt.Sprintf("%s/%d/%d/%v", c.ColumnName(), c.Size, c.MTU, c.GSO)] = c
	}
	var cols []string
	for _, col := range columnOrder(d, cells) {
		if has[col] {
			cols = append(cols, col)
		}
	}
	if len(cols) == 0 {
		return GoodputTable{}, false
	}
	cols = render.KernelFirst(d, cols)
	sort.Ints(sizes)
	sort.Slice(settings, func(i, j int) bool {
		if settings[i].mtu != settings[j].mtu {
			return settings[i].mtu < settings[j].mtu
		}
		return settings[i].gso && !settings[j].gso
	})
	t := GoodputTable{Title: tableTitle(d, k, cols)}
	for _, z := range sizes {
		t.Sizes = append(t.Sizes, render.SizeName(z))
	}
	for _, s := range settings {
		g := RowGroup{Label: fmt.Sprintf("MTU %d, GSO %s", s.mtu, matrix.OnOff(s.gso))}
		for _, col := range cols {
			row := GoodputRow{Column: render.ColumnLabel(d, col)}
			for _, z := range sizes {
				c, ok := at[fmt.Sprintf("%s/%d/%d/%v", col, z, s.mtu, s.gso)]
				row.Cells = append(row.Cells, goodputCell(c, ok))
			}
			g.Rows = append(g.Rows, row)
		}
		t.Groups = append(t.Groups, g)
	}
	return t, true
}

// columnOrder is the text tables' column order: each of the spec's
// transports (then any other the cells name), its other drivers' columns
// after it ("kquic", "kquic(C)").
func columnOrder(d *results.Document, cells []results.CellResult) []string {
	ts := slices.Clone(d.Spec.Transports)
	driven := map[matrix.Cell]bool{} // transport and driver
	for _, c := range cells {
		if !slices.Contains(ts, c.Transport) {
			ts = append(ts, c.Transport)
		}
		if c.Driver != "" {
			driven[matrix.Cell{Transport: c.Transport, Driver: c.Driver}] = true
		}
	}
	var out []string
	for _, t := range ts {
		out = append(out, matrix.Cell{Transport: t}.ColumnName())
		for _, dr := range matrix.Drivers()[1:] {
			if c := (matrix.Cell{Transport: t, Driver: dr}); driven[c] {
				out = append(out, c.ColumnName())
			}
		}
	}
	return out
}

func tableTitle(d *results.Document, k tableKey, cols []string) string {
	title := "Encrypted"
	if !k.crypto {
		var how []string
		for _, t := range cols {
			if h := render.UnencryptedHow(d, t); h != "" {
				how = append(how, h)
			}
		}
		title = "Unencrypted"
		if len(how) > 0 {
			title += " (" + strings.Join(how, "; ") + ")"
		}
	}
	words := "client to server"
	if k.dir == "down" {
		words = "server to client"
	}
	title += fmt.Sprintf(", %s (%s), %d stream(s)", k.dir, words, k.streams)
	if k.mux {
		title += " multiplexed on one connection"
	}
	if k.cc != "" {
		title += ", congestion control " + k.cc
	}
	if k.netem != "" {
		title += ", link " + k.netem
	}
	n := fmt.Sprint(d.Spec.Repeat)
	if d.Spec.MaxRepeat > d.Spec.Repeat {
		n = fmt.Sprintf("%d-%d", d.Spec.Repeat, d.Spec.MaxRepeat)
	}
	return title + ": goodput in Mbit/s, median of " + n + " samples"
}

func goodputCell(c results.CellResult, ok bool) TableCell {
	if !ok {
		return TableCell{Text: "", Title: "not in this results file", Class: "none"}
	}
	tc := TableCell{Key: c.Key}
	switch c.Status {
	case results.StatusOK:
		tc.Text, tc.Class = fmt.Sprintf("%.0f", c.MedianBps/1e6), "ok"
		tc.Title = fmt.Sprintf("median %.1f Mbit/s of %d samples, lowest %.1f, highest %.1f; the median's %.0f%% interval %.1f-%.1f (spread %.0f%%)",
			c.MedianBps/1e6, len(c.Samples), c.MinBps/1e6, c.MaxBps/1e6, results.SpreadConfidence*100, c.LowBps/1e6, c.HighBps/1e6, c.Spread*100)
		if c.WideSpread {
			tc.Text += "~"
			tc.Class = "wide"
		}
	case results.StatusNA:
		tc.Text, tc.Class, tc.Title = "n/a", "na", strings.TrimPrefix(c.Note, "n/a: ")
	case results.StatusUnavailable:
		tc.Text, tc.Class, tc.Title = "–", "na", "unavailable here: "+c.Note
	default:
		tc.Text, tc.Class, tc.Title = "FAIL", "fail", c.Error
	}
	return tc
}

// tableNotes say what the tables' marks and absent columns mean, as the
// text tables' notes do.
func tableNotes(d *results.Document) []string {
	seen := map[string]bool{}
	var notes []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			notes = append(notes, s)
		}
	}
	wide := false
	for _, c := range d.Cells {
		switch c.Status {
		case results.StatusUnavailable:
			add(fmt.Sprintf("– %s is unavailable here: %s", render.ColumnLabel(d, c.ColumnName()), c.Note))
		case results.StatusNA:
			add(fmt.Sprintf("n/a %s: %s", render.ColumnLabel(d, c.ColumnName()), strings.TrimPrefix(c.Note, "n/a: ")))
		case results.StatusFailed:
			add(fmt.Sprintf("FAIL %s: %s", c.Key, c.Error))
		case results.StatusOK:
			wide = wide || c.WideSpread
			if !c.GSO && c.GSONote != "" {
				add(fmt.Sprintf("GSO off for %s: %s", render.ColumnLabel(d, c.ColumnName()), c.GSONote))
			}
		}
	}
	if wide {
		add(fmt.Sprintf("~ spread above %.0f%% of the median (the median's %.0f%% interval over the repeats; the range up to 4 samples): the machine is not quiet, or measure with more --time", results.MaxSpread*100, results.SpreadConfidence*100))
	}
	if n := render.KquicNote(d); n != "" {
		add(n)
	}
	if n := d.Spec.ReadSizeText(); n != "" {
		add(n)
	}
	return notes
}
