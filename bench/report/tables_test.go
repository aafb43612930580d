//go:build linux

package report_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/native"
	"kquic.dev/bench/render"
	"kquic.dev/bench/report"
	"kquic.dev/bench/results"
)

// TestGoodputTables: a bulk run's tables as HTML tables: one per
// encryption, the sizes across, a group per MTU and GSO setting with a row
// per column of the text tables (the native driver's "kquic(C)" beside
// "kquic"), every value the cell's median, and no "…".
func TestGoodputTables(t *testing.T) {
	spec := matrix.Spec{Transports: []string{"kquic", "tcp"}, Drivers: []matrix.Driver{matrix.DriverGo, native.Name},
		Sizes: []int{1 << 10, 64 << 10}, MTUs: []int{1500, 9000}, GSO: []bool{true, false}, Crypto: []bool{true, false},
		Directions: []matrix.Direction{matrix.Up}, Streams: 1, Repeat: 3}
	d := &results.Document{Schema: results.SchemaVersion, Spec: spec, Complete: true}
	for _, c := range spec.Cells() {
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
		if c.Transport == "tcp" && c.Crypto {
			r.Status, r.Note = results.StatusNA, "n/a: plain TCP has no encryption"
			d.Cells = append(d.Cells, r)
			continue
		}
		for i := range 3 {
			bps := float64(c.Size*c.MTU/100+i) * 1e3
			r.Samples = append(r.Samples, results.Sample{Bytes: int64(bps / 8), Seconds: 1, Bps: bps,
				Counters: map[string]float64{"client.tx_packets": 100, "server.rx_packets": 100, "server.drops": 7,
					"server.drop.NOT_SPECIFIED": 7, "server.drop.NOT_SPECIFIED@quic_frame_put": 7}})
		}
		r.Summarize()
		d.Cells = append(d.Cells, r)
	}
	p, html := build(t, []report.Run{{Name: "both.json", Doc: d}}, report.Options{})
	rv := p.Runs[0]
	if len(rv.GoodputTables) != 2 {
		t.Fatalf("%d goodput tables, want 2 (encrypted, unencrypted)", len(rv.GoodputTables))
	}
	for i, tb := range rv.GoodputTables {
		if !slices.Equal(tb.Sizes, []string{"1 KiB", "64 KiB"}) || len(tb.Groups) != 4 {
			t.Errorf("table %q: sizes %v, %d groups; want 1 and 64 KiB, 4 (MTU × GSO)", tb.Title, tb.Sizes, len(tb.Groups))
		}
		// The kernel's kquic figure first, as "kquic"; the Go bindings'
		// beside it as "kquic(Go)".
		want := []string{"kquic", "kquic(Go)", "tcp", "tcp(C)"}
		if i == 0 {
			want = want[:2] // tcp has no encrypted cell
		}
		for _, g := range tb.Groups {
			var cols []string
			for _, r := range g.Rows {
				cols = append(cols, r.Column)
				for _, c := range r.Cells {
					cr, ok := lookupKey(d, c.Key)
					if !ok || c.Text != fmt.Sprintf("%.0f", cr.MedianBps/1e6) || render.ColumnLabel(d, cr.ColumnName()) != r.Column {
						t.Errorf("%s %s %s: %q for cell %q", tb.Title, g.Label, r.Column, c.Text, c.Key)
					}
				}
			}
			if !slices.Equal(cols, want) {
				t.Errorf("%s %s: rows %v, want %v", tb.Title, g.Label, cols, want)
			}
		}
	}
	if strings.Contains(html, ">…<") {
		t.Error("a value shows …")
	}
	et := rv.ExplainTable
	if et == nil {
		t.Fatal("no counters table")
	}
	var names []string
	for _, c := range et.Columns {
		names = append(names, c.Name)
	}
	// No capture, no pinned CPUs, no cycles, no syscalls: those columns go.
	if want := []string{"goodput", "sender's packets", "receiver's packets", "sender's packets", "drops", "where dropped"}; !slices.Equal(names, want) {
		t.Errorf("counters columns %v, want %v", names, want)
	}
	row := et.Groups[0].Rows[0]
	if where := row.Values[len(row.Values)-1]; !strings.Contains(where, "server NOT_SPECIFIED@quic_frame_put: ") {
		t.Errorf("where dropped: %q", where)
	}
}

func lookupKey(d *results.Document, key string) (results.CellResult, bool) {
	for _, c := range d.Cells {
		if c.Key == key {
			return c, true
		}
	}
	return results.CellResult{}, false
}
