package plot_test

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/plot"
	"kquic.dev/bench/results"
)

// synthetic is a run of kquic, ktls and tcp over sizes 1K-64K, MTU 1500 and
// 9000, GSO on and off, encryption on (tcp off), n repeats each, goodput
// mean[t] × size factor with relative noise sd, and --explain counters.
func synthetic(seed uint64, n int, mean map[string]float64, sd float64) *results.Document {
	rnd := rand.New(rand.NewPCG(seed, 9))
	spec := matrix.Spec{Transports: []string{"kquic", "ktls", "tcp"}, Sizes: []int{1 << 10, 4 << 10, 16 << 10, 64 << 10},
		MTUs: []int{1500, 9000}, GSO: []bool{true, false}, Crypto: []bool{true, false}, Directions: []matrix.Direction{matrix.Up}, Streams: 1, Repeat: n}
	d := &results.Document{Schema: results.SchemaVersion, Spec: spec}
	d.Env.CPUModel, d.Env.CPUs = "test CPU", 2
	for _, c := range spec.Cells() {
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK, Offloads: "mtu; x"}
		if (c.Transport == "tcp") == c.Crypto {
			r.Status = results.StatusNA
			d.Cells = append(d.Cells, r)
			continue
		}
		for range n {
			bps := mean[c.Transport] * float64(c.Size) / 1024 * (1 + sd*rnd.NormFloat64()) * 1e6
			bytes := int64(bps / 8)
			r.Samples = append(r.Samples, results.Sample{Bytes: bytes, Seconds: 1, Bps: bps, CPU: results.CPU{BusyCores: 1.5},
				Counters: map[string]float64{"client.tx_packets": float64(bytes) / 1200, "server.rx_packets": float64(bytes) / 1200,
					"client.syscalls": 10, "server.syscalls": 20, "client.syscall.sendmsg": 5, "client.drops": 0}})
		}
		r.Summarize()
		d.Cells = append(d.Cells, r)
	}
	return d
}

var means = map[string]float64{"kquic": 100, "ktls": 300, "tcp": 500}

// TestGoodputSeries: one panel per MTU × GSO × encryption, a series per
// transport measured in it with one point per size, each the cell's median
// with bars from its lowest to highest repeat.
func TestGoodputSeries(t *testing.T) {
	d := synthetic(1, 5, means, 0.05)
	figs := plot.Goodput(d)
	if len(figs) != 1 || figs[0].Name != "goodput-up" {
		t.Fatalf("figures %+v: want one, goodput-up", figs)
	}
	f := figs[0]
	if len(f.Panels) != 8 || f.Cols != 4 || f.Rows() != 2 {
		t.Fatalf("panels %d in %d columns: want 8 in 4 (MTU 1500/9000 × GSO on/off × encrypted/not)", len(f.Panels), f.Cols)
	}
	want := map[string][]string{
		"MTU 1500, GSO on, encrypted": {"kquic", "ktls"}, "MTU 1500, GSO off, unencrypted": {"tcp"},
		"MTU 9000, GSO off, encrypted": {"kquic", "ktls"}, "MTU 9000, GSO on, unencrypted": {"tcp"},
	}
	for _, p := range f.Panels {
		var labels []string
		for _, s := range p.Series {
			labels = append(labels, s.Label)
			if len(s.Points) != 4 {
				t.Errorf("%s/%s: %d points, want 4 sizes", p.Title, s.Label, len(s.Points))
			}
			for i, pt := range s.Points {
				if pt.X != float64(d.Spec.Sizes[i]) {
					t.Errorf("%s/%s point %d at x=%v, want size %d", p.Title, s.Label, i, pt.X, d.Spec.Sizes[i])
				}
				r, _ := d.Lookup(cellOf(t, d, pt.Cell))
				if pt.Y != r.MedianBps/1e6 || pt.Lo != r.MinBps/1e6 || pt.Hi != r.MaxBps/1e6 || !(pt.Lo < pt.Y && pt.Y < pt.Hi) {
					t.Errorf("%s: point %+v, cell median %v range %v-%v", pt.Cell, pt, r.MedianBps/1e6, r.MinBps/1e6, r.MaxBps/1e6)
				}
				if r.Transport != s.Label {
					t.Errorf("%s in series %s", pt.Cell, s.Label)
				}
			}
		}
		if w, ok := want[p.Title]; ok && !slices.Equal(labels, w) {
			t.Errorf("panel %q: series %v, want %v", p.Title, labels, w)
		}
	}
	// Every measured cell is plotted, once.
	var ok []string
	for _, c := range d.Cells {
		if c.Status == results.StatusOK {
			ok = append(ok, c.Key)
		}
	}
	got := f.Cells()
	slices.Sort(ok)
	slices.Sort(got)
	if !slices.Equal(got, ok) {
		t.Errorf("plotted cells %d, measured %d", len(got), len(ok))
	}
}

func cellOf(t *testing.T, d *results.Document, key string) matrix.Cell {
	for _, c := range d.Cells {
		if c.Key == key {
			return c.Cell
		}
	}
	t.Fatalf("no cell %s", key)
	return matrix.Cell{}
}

// svgTexts is the text of every <text> element of an SVG document.
func svgTexts(t *testing.T, b []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var out []string
	in := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			in = v.Name.Local == "text"
		case xml.EndElement:
			in = false
		case xml.CharData:
			if in {
				out = append(out, strings.TrimSpace(string(v)))
			}
		}
	}
}

// svgRings counts the ring glyphs of an SVG: paths of two arcs.
func svgRings(t *testing.T, b []byte) int {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	n := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "path" {
			for _, a := range e.Attr {
				if a.Name.Local == "d" && strings.Count(a.Value, "A") == 2 {
					n++
				}
			}
		}
	}
}

// TestRenderSVGAndPNG: the SVG is well-formed, draws a glyph per point, and
// names every panel and, in every panel, the legend entry of each of its
// series; the PNG decodes to the figure's size.
func TestRenderSVGAndPNG(t *testing.T) {
	d := synthetic(2, 3, means, 0.05)
	f := plot.Goodput(d)[0]
	var svg bytes.Buffer
	if err := f.Render(&svg, "svg"); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, svg.Bytes())
	count := map[string]int{}
	for _, s := range texts {
		count[s]++
	}
	if count[f.Title] != 1 {
		t.Errorf("the title %q is not in the SVG once: %d", f.Title, count[f.Title])
	}
	legend := map[string]int{}
	for _, p := range f.Panels {
		if count[p.Title] != 1 {
			t.Errorf("panel title %q appears %d times in the SVG", p.Title, count[p.Title])
		}
		for _, s := range p.Series {
			legend[s.Label]++
		}
	}
	// kquic and ktls in the 4 encrypted panels, tcp in the 4 others.
	for l, n := range map[string]int{"kquic": 4, "ktls": 4, "tcp": 4} {
		if legend[l] != n || count[l] != n {
			t.Errorf("legend %q: %d panels have it, the SVG shows it %d times; want %d", l, legend[l], count[l], n)
		}
	}
	for _, size := range []string{"1K", "4K", "16K", "64K"} {
		if count[size] != 8 {
			t.Errorf("x tick %q appears %d times, want once per panel (8)", size, count[size])
		}
	}
	// kquic, the first transport, is drawn with rings (gonum's first glyph):
	// one per point plus one in each legend that names it.
	points := 0
	for _, p := range f.Panels {
		for _, s := range p.Series {
			if s.Label == "kquic" {
				points += len(s.Points) + 1
			}
		}
	}
	if rings := svgRings(t, svg.Bytes()); points != 20 || rings != points {
		t.Errorf("the SVG has %d ring glyphs; want %d (kquic's 16 points and 4 legend entries)", rings, points)
	}
	var pngBuf bytes.Buffer
	if err := f.Render(&pngBuf, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&pngBuf)
	if err != nil {
		t.Fatalf("the PNG does not decode: %v", err)
	}
	w, h := f.Size()
	if b := img.Bounds(); math.Abs(float64(b.Dx())-w.Dots(96)) > 1 || math.Abs(float64(b.Dy())-h.Dots(96)) > 1 {
		t.Errorf("PNG %v, want %vx%v", b, w.Dots(96), h.Dots(96))
	}
	if err := f.Render(io.Discard, "gif"); err == nil || !strings.Contains(err.Error(), "svg or png") {
		t.Errorf("format gif: %v", err)
	}
}

// TestCountersAndCPU: figures exist for the counters the samples carry,
// with the per-MB values computed from them, and none without --explain.
func TestCountersAndCPU(t *testing.T) {
	d := synthetic(3, 3, means, 0.05)
	names := map[string]plot.Figure{}
	for _, f := range plot.Counters(d) {
		names[f.Name] = f
	}
	for _, n := range []string{"sender-packets-up", "receiver-packets-up", "syscalls-up", "io-syscalls-up", "drops-up"} {
		if _, ok := names[n]; !ok {
			t.Errorf("no figure %s (have %v)", n, names)
		}
	}
	if _, ok := names["wire-packets-up"]; ok {
		t.Errorf("a wire-packets figure without capture counters")
	}
	// tx_packets is bytes/1200: 833.3 per MB in every cell.
	for _, p := range names["sender-packets-up"].Panels {
		for _, s := range p.Series {
			for _, pt := range s.Points {
				if math.Abs(pt.Y-1e6/1200) > 0.01 {
					t.Errorf("%s: %v sender packets/MB, want 833.3", pt.Cell, pt.Y)
				}
			}
		}
	}
	// CPU: 1.5 busy cores for 1 s over the bytes.
	for _, p := range plot.CPUPerByte(d)[0].Panels {
		for _, s := range p.Series {
			for _, pt := range s.Points {
				r, _ := d.Lookup(cellOf(t, d, pt.Cell))
				var v []float64
				for _, x := range r.Samples {
					v = append(v, 1.5e9/float64(x.Bytes))
				}
				slices.Sort(v)
				if math.Abs(pt.Y-v[len(v)/2]) > 1e-9 || pt.Lo != v[0] || pt.Hi != v[len(v)-1] {
					t.Errorf("%s: CPU point %+v, want median of %v", pt.Cell, pt, v)
				}
			}
		}
	}
	if c := plot.Cycles(d); len(c) != 0 {
		t.Errorf("a cycles figure without cycle counts")
	}
	d.Cells[1].Samples[0].CPU.CyclesPerByte = 3.5
	if c := plot.Cycles(d); len(c) != 1 || len(c[0].Cells()) != 1 || c[0].Cells()[0] != d.Cells[1].Key {
		t.Errorf("cycles of one sample of one cell: %+v", c)
	}
	for i := range d.Cells {
		for j := range d.Cells[i].Samples {
			d.Cells[i].Samples[j].Counters = nil
		}
	}
	if c := plot.Counters(d); len(c) != 0 {
		t.Errorf("counter figures without counters: %d", len(c))
	}
}

// TestChange: kquic 10% faster in the new run shows about +10% with a bar
// above zero; ktls, unchanged, shows a bar across zero.
func TestChange(t *testing.T) {
	old := synthetic(4, 10, means, 0.02)
	new := synthetic(5, 10, map[string]float64{"kquic": 110, "ktls": 300, "tcp": 500}, 0.02)
	c, err := results.Compare(old, new, results.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	figs := plot.Change(c, old.Spec)
	if len(figs) != 1 || figs[0].Name != "change-goodput-up" {
		t.Fatalf("figures %+v", figs)
	}
	sig := map[string]bool{}
	for _, cc := range c.Cells {
		sig[cc.Key] = cc.Goodput.Significant
		if cc.Transport == "kquic" && !cc.Goodput.Significant {
			t.Errorf("kquic +10%% not significant: %+v", cc.Goodput)
		}
	}
	n := 0
	for _, p := range figs[0].Panels {
		for _, s := range p.Series {
			for _, pt := range s.Points {
				n++
				if pt.Marked != sig[pt.Cell] {
					t.Errorf("%s: marked %v, significant %v", pt.Cell, pt.Marked, sig[pt.Cell])
				}
				switch s.Label {
				case "kquic":
					if pt.Y < 6 || pt.Y > 14 || pt.Lo <= 0 || pt.Hi < pt.Y {
						t.Errorf("kquic %s: %+v, want about +10%% with the bar above 0", pt.Cell, pt)
					}
				default:
					if pt.Lo > 0 || pt.Hi < 0 {
						t.Errorf("%s unchanged: %+v, want a bar across 0", pt.Cell, pt)
					}
				}
			}
		}
	}
	if n != len(c.Cells) {
		t.Errorf("%d points for %d compared cells", n, len(c.Cells))
	}
	if err := figs[0].Render(io.Discard, "svg"); err != nil {
		t.Error(err)
	}
}
