package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// The CLI prints what the library renders, flag for flag: compare's three
// formats and --counters against the golden files of package bench, and
// report's text (with --explain) pinned here.
const benchData = "../../bench/render/testdata"

var update = flag.Bool("update", false, "rewrite the golden files of the report command")

func TestCompareCommandGolden(t *testing.T) {
	old, new := filepath.Join(benchData, "results", "rr-old.json"), filepath.Join(benchData, "results", "rr-new.json")
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"compare-rr.txt", nil},
		{"compare-rr.counters.txt", []string{"--counters"}},
		{"compare-rr.json", []string{"--format", "json"}},
		{"compare-rr.csv", []string{"--format", "csv"}},
	} {
		out, err := run(t, append([]string{"compare", old, new}, c.args...)...)
		if err != nil {
			t.Fatalf("compare %v: %v", c.args, err)
		}
		want, err := os.ReadFile(filepath.Join(benchData, "golden", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("compare %v differs from %s:\n%s", c.args, c.golden, out)
		}
	}
}

func TestReportCommandGolden(t *testing.T) {
	files := []string{filepath.Join(benchData, "results", "handshake-old.json"), filepath.Join(benchData, "results", "bulk-new.json")}
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"report.golden", nil},
		{"report-explain.golden", []string{"--explain"}},
	} {
		out, err := run(t, append(append([]string{"report"}, files...), c.args...)...)
		if err != nil {
			t.Fatalf("report %v: %v", c.args, err)
		}
		path := filepath.Join("testdata", c.golden)
		if *update {
			os.MkdirAll("testdata", 0o755)
			os.WriteFile(path, []byte(out), 0o644)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("report %v differs from %s:\n%s", c.args, path, out)
		}
	}
}
