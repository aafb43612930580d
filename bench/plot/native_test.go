//go:build linux

package plot_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/native"
	"kquic.dev/bench/plot"
	"kquic.dev/bench/results"
)

// bothDrivers is a run of kquic and tcp by both drivers (the Go transports
// and the native C tools), the native cells slower, with counters.
func bothDrivers() *results.Document {
	spec := matrix.Spec{Transports: []string{"kquic", "tcp"}, Drivers: []matrix.Driver{matrix.DriverGo, native.Name},
		Sizes: []int{1 << 10, 4 << 10, 64 << 10}, MTUs: []int{1500}, GSO: []bool{true}, Crypto: []bool{false},
		Directions: []matrix.Direction{matrix.Up}, Streams: 1, Repeat: 3}
	d := &results.Document{Schema: results.SchemaVersion, Spec: spec, Complete: true}
	for _, c := range spec.Cells() {
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
		mean := map[string]float64{"kquic": 100, "tcp": 500}[c.Transport] * float64(c.Size) / 1024
		if c.Driver == native.Name {
			mean *= 0.5
		}
		for i := range 3 {
			bps := mean * (1 + 0.01*float64(i-1)) * 1e6
			r.Samples = append(r.Samples, results.Sample{Bytes: int64(bps / 8), Seconds: 1, Bps: bps, CPU: results.CPU{BusyCores: 1},
				Counters: map[string]float64{"client.tx_packets": bps / 8 / 1200, "client.syscalls": 10}})
		}
		r.Summarize()
		d.Cells = append(d.Cells, r)
	}
	return d
}

// TestNativeDriverSeries: a native cell is its own series ("kquic(C)",
// beside "kquic" in its colour, dashed), not a second point at the same
// size in the Go series; each series has one point per size; the legend
// names both; the syscall figures leave the native cells out (their
// system calls are another process's).
func TestNativeDriverSeries(t *testing.T) {
	d := bothDrivers()
	figs := plot.Goodput(d)
	if len(figs) != 1 || len(figs[0].Panels) != 1 {
		t.Fatalf("figures %+v: want one of one panel", figs)
	}
	p := figs[0].Panels[0]
	var labels []string
	index := map[string]int{}
	for _, s := range p.Series {
		labels = append(labels, s.Label)
		index[s.Label] = s.Index
		if s.Native != strings.HasSuffix(s.Label, "(C)") {
			t.Errorf("series %s: Native %v", s.Label, s.Native)
		}
		var xs []float64
		for _, pt := range s.Points {
			xs = append(xs, pt.X)
			r, _ := d.Lookup(cellOf(t, d, pt.Cell))
			if r.ColumnName() != s.Label {
				t.Errorf("cell %s (%s) in series %s", pt.Cell, r.ColumnName(), s.Label)
			}
		}
		if !slices.Equal(xs, []float64{1 << 10, 4 << 10, 64 << 10}) {
			t.Errorf("series %s at sizes %v, want one point per size", s.Label, xs)
		}
	}
	if want := []string{"kquic", "kquic(C)", "tcp", "tcp(C)"}; !slices.Equal(labels, want) {
		t.Errorf("series %v, want %v", labels, want)
	}
	if index["kquic"] != index["kquic(C)"] || index["tcp"] != index["tcp(C)"] || index["kquic"] == index["tcp"] {
		t.Errorf("colours %v: want a transport's two series alike, the transports apart", index)
	}
	var b bytes.Buffer
	if err := figs[0].Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, b.Bytes())
	for _, l := range []string{"kquic", "kquic(C)", "tcp", "tcp(C)"} {
		if !slices.Contains(texts, l) {
			t.Errorf("legend has no %q: %v", l, texts)
		}
	}
	for _, f := range plot.Counters(d) {
		for _, s := range f.Panels[0].Series {
			if strings.HasPrefix(f.Name, "syscalls") && s.Native {
				t.Errorf("%s: series %s: the native tools' syscalls are not this process's", f.Name, s.Label)
			}
			if strings.HasPrefix(f.Name, "sender-packets") && len(s.Points) != 3 {
				t.Errorf("%s: series %s has %d points, want 3", f.Name, s.Label, len(s.Points))
			}
		}
	}
}
