package render_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/native"
	"kquic.dev/bench/ratio"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// readmeDoc is a run of the module README's axes (1 and 64 KiB, MTU 1500,
// GSO on and off, encrypted and not) with the columns given, each cell's
// goodput Mbit/s from mbps, with 1% noise over 6 samples.
func readmeDoc(seed uint64, cols []string, mbps func(col string, c matrix.Cell) float64) *results.Document {
	rnd := rand.New(rand.NewPCG(seed, 3))
	d := &results.Document{Schema: results.SchemaVersion, Spec: matrix.Spec{Transports: []string{"kquic", "ktls", "tcp"},
		Sizes: []int{1 << 10, 64 << 10}, MTUs: []int{1500}, GSO: []bool{true, false}, Crypto: []bool{true, false},
		Directions: []matrix.Direction{matrix.Up}, Streams: 1, Repeat: 6}}
	d.Env.Machine.Kind = results.MachineEmulated
	if slices.ContainsFunc(cols, func(c string) bool { return strings.HasSuffix(c, "(C)") }) {
		d.Spec.Drivers = []matrix.Driver{matrix.DriverGo, native.Name}
	}
	for _, gso := range d.Spec.GSO {
		for _, crypto := range d.Spec.Crypto {
			for _, size := range d.Spec.Sizes {
				for _, col := range cols {
					c := matrix.ColumnCell(col, matrix.Cell{Size: size, MTU: 1500, GSO: gso, Crypto: crypto, Direction: matrix.Up, Streams: 1})
					if (c.Transport == "tcp" && crypto) || (c.Transport == "ktls" && !crypto) {
						continue
					}
					r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
					for range 6 {
						r.Samples = append(r.Samples, results.Sample{Bps: mbps(col, c) * 1e6 * (1 + 0.01*rnd.NormFloat64()), Bytes: 1e6, Seconds: 1})
					}
					r.Summarize()
					d.Cells = append(d.Cells, r)
				}
			}
		}
	}
	return d
}

// halves: kquic at half of ktls and tcp, GSO off halving ktls and tcp.
func halves(col string, c matrix.Cell) float64 {
	v := map[string]float64{"kquic": 50, "kquic(C)": 100, "ktls": 200, "tcp": 200, "tcp(C)": 200}[col]
	if !c.GSO && c.Transport != "kquic" {
		v /= 2
	}
	return v
}

// TestRatioTables: the README's ratios from a run's samples, the kernel's
// figure (kquic(C)) where the run has it, each interval holding the true
// ratio, the published ratio beside it, and the emulated-CPU line.
func TestRatioTables(t *testing.T) {
	d := readmeDoc(1, []string{"kquic", "kquic(C)", "ktls", "tcp", "tcp(C)"}, halves)
	tables := render.RatioTables(d)
	titles := map[string]bool{}
	for _, tb := range tables {
		titles[tb.Title] = true
	}
	for _, want := range []string{"kquic(C) / ktls, encrypted", "kquic(C) / tcp(C), unencrypted", "ktls, GSO off / GSO on, encrypted", "tcp(C), GSO off / GSO on, unencrypted"} {
		if !titles[want] {
			t.Errorf("no table %q among %v", want, titles)
		}
	}
	for _, tb := range tables {
		for _, row := range tb.Rows {
			for i, c := range row.Cells {
				want := 0.5 // every ratio here is a half
				if strings.HasPrefix(tb.Title, "kquic(C)") && strings.Contains(row.Label, "GSO off") {
					want = 1 // kquic has no GSO to lose; the denominator halves
				}
				if c.Missing != "" || !c.Ratio.Contains(want) || c.Ratio.Hi-c.Ratio.Lo > 0.1*want {
					t.Errorf("%s, %s, column %d: %v (missing %q), want about %.1f with a narrow interval", tb.Title, row.Label, i, c.Ratio, c.Missing, want)
				}
				if len(c.Refs) != 2 || !c.Refs[0].OK {
					t.Errorf("%s, %s, column %d: no published ratio beside it", tb.Title, row.Label, i)
				}
			}
		}
	}
	var out bytes.Buffer
	if err := render.WriteRatios(&out, d); err != nil {
		t.Fatal(err)
	}
	// The README's QUIC/kTLS at 1 KiB, MTU 1500: 1.67/2.16.
	for _, want := range []string{"README 2024", "0.77", "on an emulated CPU only ratios are comparable"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the ratio tables do not say %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "Go bindings") {
		t.Errorf("a run with kquic(C) says its kquic figure is the Go bindings':\n%s", out.String())
	}
	t.Logf("\n%s", out.String())

	goOnly := readmeDoc(1, []string{"kquic", "ktls", "tcp"}, halves)
	out.Reset()
	render.WriteRatios(&out, goOnly)
	if !strings.Contains(out.String(), "kquic / ktls, encrypted") || !strings.Contains(out.String(), "not the kernel's alone") {
		t.Errorf("without native cells the table does not say its kquic is the Go bindings':\n%s", out.String())
	}
}

// TestRatioChanges: two runs of the same samples move no ratio; a
// numerator 20% faster in B moves its ratios by x1.2, significantly, and
// they come first.
func TestRatioChanges(t *testing.T) {
	cols := []string{"kquic(C)", "ktls", "tcp(C)"}
	a := readmeDoc(1, cols, halves)
	var out bytes.Buffer
	render.WriteRatioChanges(&out, a, readmeDoc(1, cols, halves), 0.05)
	if strings.Contains(out.String(), " x") || !strings.Contains(out.String(), "~") {
		t.Errorf("the same run twice: a ratio moved:\n%s", out.String())
	}
	faster := func(col string, c matrix.Cell) float64 {
		if col == "kquic(C)" {
			return 1.2 * halves(col, c)
		}
		return halves(col, c)
	}
	out.Reset()
	render.WriteRatioChanges(&out, a, readmeDoc(2, cols, faster), 0.05)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 || !strings.Contains(lines[1], "kquic(C) / ") || !strings.Contains(lines[1], "x1.2") {
		t.Errorf("kquic(C) 20%% faster: the first change is not a kquic(C) ratio x1.2:\n%s", out.String())
	}
	n := map[string]int{}
	for _, l := range lines[1:] {
		if strings.Contains(l, "GSO off / GSO on") && !strings.Contains(l, "~") {
			t.Errorf("a ratio kquic(C) is not in moved: %q", l)
		}
		title, _, _ := strings.Cut(strings.TrimSpace(l), ", mtu")
		n[title]++
	}
	// Every ratio of every table: 2 rows x 2 sizes, 1 row x 2 sizes.
	for title, want := range map[string]int{"kquic(C) / ktls, encrypted": 4, "kquic(C) / tcp(C), unencrypted": 4,
		"ktls, GSO off / GSO on, encrypted": 2, "tcp(C), GSO off / GSO on, unencrypted": 2} {
		if n[title] != want {
			t.Errorf("%d changes of %q, want %d", n[title], title, want)
		}
	}
	t.Logf("\n%s", out.String())
}

// TestOptionalStoppingNote: a run whose wide cells got more samples than
// --repeat says that their spread reads too narrow; one without does not.
func TestOptionalStoppingNote(t *testing.T) {
	d := readmeDoc(1, []string{"kquic", "ktls"}, halves) // 6 samples a cell
	var out bytes.Buffer
	d.Spec.Repeat = 6
	render.WriteTables(&out, d)
	if strings.Contains(out.String(), "optional stopping") {
		t.Errorf("no cell got extra samples, yet the note is there:\n%s", out.String())
	}
	d.Spec.Repeat, d.Spec.MaxRepeat = 3, 9
	out.Reset()
	render.WriteTables(&out, d)
	if !strings.Contains(out.String(), "optional stopping") || !strings.Contains(out.String(), "--repeat 3") {
		t.Errorf("cells with samples beyond --repeat 3, and no note:\n%s", out.String())
	}
}

// TestKernelFirst: where a run measured kquic natively, the tables head
// the kernel's figure "kquic" and put it first, the Go bindings' beside it
// as "kquic(Go)", with their ratio per size under the tables.
func TestKernelFirst(t *testing.T) {
	d := readmeDoc(1, []string{"kquic", "kquic(C)", "ktls"}, halves)
	var out bytes.Buffer
	render.WriteTables(&out, d)
	for _, want := range []string{"each cell kquic | kquic(Go) | ktls", "kquic(Go) / kquic, encrypted, MTU 1500: 1 KiB 0.50 [", "kquic: perf_test -x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the tables do not say %q:\n%s", want, out.String())
		}
	}
	// The first value of a row is the kernel's (100), then the Go bindings' (50).
	if !strings.Contains(out.String(), "100 | 50 | 200") {
		t.Errorf("the kernel's figure does not come first:\n%s", out.String())
	}
}

// TestRatioChangesOtherAxes: run B measured only GSO off and one size; each
// ratio is compared with B's at the same GSO setting and size, not at the
// same row of B's smaller tables.
func TestRatioChangesOtherAxes(t *testing.T) {
	cols := []string{"kquic(C)", "ktls", "tcp(C)"}
	a := readmeDoc(1, cols, halves)
	b := readmeDoc(2, cols, halves)
	b.Spec.GSO, b.Spec.Sizes = []bool{false}, []int{64 << 10}
	b.Cells = slices.DeleteFunc(b.Cells, func(c results.CellResult) bool { return c.GSO || c.Size != 64<<10 })
	changes := render.RatioChanges(a, b, 0.05)
	// The two pair tables' GSO-off rows at 64 KiB; the GSO tables need
	// both settings in B.
	if len(changes) != 2 {
		t.Fatalf("%d changes, want 2: %v", len(changes), changes)
	}
	for _, c := range changes {
		if c.Row != ratio.RowLabel(1500, false) || c.Size != 64<<10 || c.Significant || !c.Factor.Contains(1) {
			t.Errorf("%s: want GSO off at 64 KiB, not moved", c)
		}
	}
}

// TestNoGSONotes: a GSO-off cell's note is named by its column, and a cell
// without one (the native tools') adds no empty line.
func TestNoGSONotes(t *testing.T) {
	d := readmeDoc(1, []string{"kquic(C)", "ktls", "tcp(C)"}, halves)
	for i := range d.Cells {
		if d.Cells[i].Transport == "ktls" && !d.Cells[i].GSO {
			d.Cells[i].GSONote = "packets of at most the MTU"
		}
	}
	var out bytes.Buffer
	render.WriteTables(&out, d)
	if !strings.Contains(out.String(), "no GSO for ktls: packets of at most the MTU") {
		t.Errorf("the ktls cells' GSO note is missing:\n%s", out.String())
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "no GSO for") && strings.HasSuffix(strings.TrimSpace(l), ":") {
			t.Errorf("an empty GSO note: %q", l)
		}
	}
}
