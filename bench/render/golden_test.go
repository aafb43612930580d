package render_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/plot"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// The results files under testdata/results were written by kqbench before
// its results and rendering moved into packages of their own (small real
// runs of every mode on a veth pair, and two documents built in code for
// what a stock host cannot measure: failures, steal, netem brakes, pinned
// ends, cycles). Every output rendered from them is pinned byte for byte
// under testdata/golden: tables, CSV, --explain, the plots, and compare's
// three formats. go test -update rewrites the golden files.

var update = flag.Bool("update", false, "rewrite the golden files")

// reportFixtures are older results files, of the report's tests: two guest
// runs of all four transports with --explain, and a host run. Their names
// here have the prefix "report-".
const reportFixtures = "../report/testdata"

// fixtures are the results files, by name without .json.
func fixtures(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, dir := range []string{filepath.Join("testdata", "results"), reportFixtures} {
		paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no results files under %s (%v)", dir, err)
		}
		for _, p := range paths {
			name := strings.TrimSuffix(filepath.Base(p), ".json")
			if dir == reportFixtures {
				name = "report-" + name
			}
			names = append(names, name)
		}
	}
	return names
}

func fixturePath(name string) string {
	if n, ok := strings.CutPrefix(name, "report-"); ok {
		return filepath.Join(reportFixtures, n+".json")
	}
	return filepath.Join("testdata", "results", name+".json")
}

func loadFixture(t *testing.T, name string) *results.Document {
	t.Helper()
	d, err := results.Load(fixturePath(name))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFixturesRoundTrip: a results file written by today's kqbench reads and
// encodes back to the same bytes, so the schema's every field and spelling
// is what it was.
func TestFixturesRoundTrip(t *testing.T) {
	for _, name := range fixtures(t) {
		if strings.HasPrefix(name, "report-") {
			continue // older files: fields added since are absent from them
		}
		want, err := os.ReadFile(fixturePath(name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.MarshalIndent(loadFixture(t, name), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(append(got, '\n'), want) {
			t.Errorf("%s: loading and encoding again changed the document", name)
		}
	}
}

func TestRenderGolden(t *testing.T) {
	for _, name := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			d := loadFixture(t, name)
			var tables, csv, explain bytes.Buffer
			if err := render.WriteTables(&tables, d); err != nil {
				t.Fatal(err)
			}
			if err := render.WriteCSV(&csv, d); err != nil {
				t.Fatal(err)
			}
			if err := render.WriteExplain(&explain, d); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("golden", name+".tables"), tables.Bytes())
			checkGolden(t, filepath.Join("golden", name+".csv"), csv.Bytes())
			checkGolden(t, filepath.Join("golden", name+".explain"), explain.Bytes())
		})
	}
}

// TestPlotGolden pins the data of every figure of every fixture (panels,
// series, points; the SVG drawn from it is not byte-stable from run to run).
func TestPlotGolden(t *testing.T) {
	for _, name := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			b, err := json.MarshalIndent(plot.All(loadFixture(t, name)), "", " ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("golden", name+".plots.json"), append(b, '\n'))
		})
	}
}

// comparisons are the pairs kqbench compare is pinned on: the two runs of
// every mode, and two whose environments differ (refused, then forced).
var comparisons = []struct {
	name, old, new string
	force          bool
}{
	{"bulk", "bulk-old", "bulk-new", false},
	{"native", "native-old", "native-new", false},
	{"rr", "rr-old", "rr-new", false},
	{"streams", "streams-old", "streams-new", false},
	{"handshake", "handshake-old", "handshake-new", false},
	{"constructed-bulk", "constructed", "bulk-new", false},
	{"constructed-bulk-forced", "constructed", "bulk-new", true},
	{"brakes-self", "brakes", "brakes", false},
	{"report-guest-explain", "report-guest-explain-a", "report-guest-explain-b", false},
	{"report-host-guest-forced", "report-host-tcp-quicgo", "report-guest-explain-a", true},
}

func TestCompareGolden(t *testing.T) {
	for _, c := range comparisons {
		t.Run(c.name, func(t *testing.T) {
			old, new := loadFixture(t, c.old), loadFixture(t, c.new)
			cmp, err := results.Compare(old, new, results.CompareOptions{Force: c.force})
			if err != nil {
				checkGolden(t, filepath.Join("golden", "compare-"+c.name+".err"), []byte(err.Error()+"\n"))
				return
			}
			var text, counters, all, js, csv bytes.Buffer
			if err := render.WriteComparison(&text, cmp, render.ComparisonView{}); err != nil {
				t.Fatal(err)
			}
			if err := render.WriteComparison(&counters, cmp, render.ComparisonView{Counters: render.ChangedCounters}); err != nil {
				t.Fatal(err)
			}
			if err := render.WriteComparison(&all, cmp, render.ComparisonView{Counters: render.AllCounters, Old: "A", New: "B"}); err != nil {
				t.Fatal(err)
			}
			if err := render.WriteComparisonJSON(&js, cmp); err != nil {
				t.Fatal(err)
			}
			if err := render.WriteComparisonCSV(&csv, cmp); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("golden", "compare-"+c.name+".txt"), text.Bytes())
			checkGolden(t, filepath.Join("golden", "compare-"+c.name+".counters.txt"), counters.Bytes())
			checkGolden(t, filepath.Join("golden", "compare-"+c.name+".all-counters.txt"), all.Bytes())
			checkGolden(t, filepath.Join("golden", "compare-"+c.name+".json"), js.Bytes())
			checkGolden(t, filepath.Join("golden", "compare-"+c.name+".csv"), csv.Bytes())
		})
	}
}

// golden is a document with every kind of cell, for the renderers.
func golden() *results.Document {
	spec := matrix.Spec{Transports: []string{"kquic", "ktls", "tcp", "quic-go"}, Sizes: []int{1024, 65536}, MTUs: []int{1500, 9000},
		GSO: []bool{true, false}, Crypto: []bool{true, false}, Directions: []matrix.Direction{matrix.Up}, Streams: 1, Time: time.Second, Repeat: 3}
	d := &results.Document{Schema: results.SchemaVersion, Spec: spec}
	v := 100.0
	for _, c := range spec.Cells() {
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
		switch {
		case c.Transport == "tcp" && c.Crypto, c.Transport == "ktls" && !c.Crypto, c.Transport == "quic-go" && !c.Crypto:
			r.Status, r.Note = results.StatusNA, "n/a: not for "+c.Transport
		case c.Transport == "kquic" && !c.GSO:
			r.Status, r.Note = results.StatusNA, "n/a: kernel QUIC has no GSO"
		case c.Transport == "ktls" && c.MTU == 9000 && c.Size == 65536 && !c.GSO:
			r.Status, r.Error = results.StatusFailed, "ktls: handshake: boom"
		default:
			v += 37
			r.MedianBps, r.MinBps, r.MaxBps = v*1e6, v*1e6, v*1e6
			r.GSONote = c.Transport + " note"
			if c.Transport == "quic-go" && c.Size == 1024 && c.MTU == 1500 {
				r.WideSpread, r.Spread = true, 0.5
			}
			if c.Transport == "tcp" && c.Size == 1024 && c.MTU == 9000 && c.GSO {
				// One sample set aside for steal, one kept with it.
				r.Disturbed = []results.Sample{{Bps: v * 0.8e6, CPU: results.CPU{StealCores: 0.34}}}
				r.Samples = []results.Sample{{Bps: v * 1e6, CPU: results.CPU{StealCores: 0.07}}, {Bps: v * 1e6}, {Bps: v * 1e6}}
			}
		}
		d.Cells = append(d.Cells, r)
	}
	return d
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestTablesGolden(t *testing.T) {
	var b bytes.Buffer
	if err := render.WriteTables(&b, golden()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "tables.golden", b.Bytes())
}

func TestCSVGolden(t *testing.T) {
	var b bytes.Buffer
	if err := render.WriteCSV(&b, golden()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "cells.csv.golden", b.Bytes())
}

func TestJSONRoundTrip(t *testing.T) {
	d := golden()
	path := filepath.Join(t.TempDir(), "d.json")
	if err := d.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := results.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(d)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Errorf("round trip changed the document")
	}
	os.WriteFile(path, []byte(`{"schema":"kqbench.matrix/v0"}`), 0o644)
	if _, err := results.Load(path); err == nil || !strings.Contains(err.Error(), "v0") {
		t.Errorf("Load of another schema = %v", err)
	}
}

// TestCPUUnavailableNote: a sample whose CPU could not be read says so
// under the tables.
func TestCPUUnavailableNote(t *testing.T) {
	d := loadFixture(t, "bulk-old")
	i := slices.IndexFunc(d.Cells, func(c results.CellResult) bool { return len(c.Samples) > 1 })
	d.Cells[i].Samples[1].CPUUnavailable = "cpu: read /proc/stat: permission denied"
	var b bytes.Buffer
	if err := render.WriteTables(&b, d); err != nil {
		t.Fatal(err)
	}
	want := "cpu   1 of the 24 samples have no CPU figures (their CPU columns read 0): cpu: read /proc/stat: permission denied\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("tables lack %q:\n%s", want, b.String())
	}
}
