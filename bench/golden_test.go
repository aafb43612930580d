//go:build linux

package bench_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kquic.dev/bench"
	"kquic.dev/bench/plot"
)

// The results files under testdata/results were written by kqbench before
// its results and rendering moved into packages of their own (small real
// runs of every mode on a veth pair, and two documents built in code for
// what a stock host cannot measure: failures, steal, netem brakes, pinned
// ends, cycles). Every output rendered from them is pinned byte for byte
// under testdata/golden: tables, CSV, --explain, the plots, and compare's
// three formats. go test -update rewrites the golden files.

// reportFixtures are older results files, of the report's tests: two guest
// runs of all four transports with --explain, and a host run. Their names
// here have the prefix "report-".
const reportFixtures = "report/testdata"

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

func loadFixture(t *testing.T, name string) *bench.Document {
	t.Helper()
	d, err := bench.Load(fixturePath(name))
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
			if err := bench.WriteTables(&tables, d); err != nil {
				t.Fatal(err)
			}
			if err := bench.WriteCSV(&csv, d); err != nil {
				t.Fatal(err)
			}
			if err := bench.WriteExplain(&explain, d); err != nil {
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
			cmp, err := bench.Compare(old, new, bench.CompareOptions{Force: c.force})
			if err != nil {
				checkGolden(t, filepath.Join("golden", "compare-"+c.name+".err"), []byte(err.Error()+"\n"))
				return
			}
			var text, counters, js, csv bytes.Buffer
			if err := bench.WriteComparison(&text, cmp, false); err != nil {
				t.Fatal(err)
			}
			if err := bench.WriteComparison(&counters, cmp, true); err != nil {
				t.Fatal(err)
			}
			if err := bench.WriteComparisonJSON(&js, cmp); err != nil {
				t.Fatal(err)
			}
			if err := bench.WriteComparisonCSV(&csv, cmp); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("golden", "compare-"+c.name+".txt"), text.Bytes())
			checkGolden(t, filepath.Join("golden", "compare-"+c.name+".counters.txt"), counters.Bytes())
			checkGolden(t, filepath.Join("golden", "compare-"+c.name+".json"), js.Bytes())
			checkGolden(t, filepath.Join("golden", "compare-"+c.name+".csv"), csv.Bytes())
		})
	}
}
