package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

const fixture = "../../bench/report/testdata/host-tcp-quicgo.json"

// TestReportAndPlot: report still prints the tables, --html writes the page
// with a flamegraph figure, plot writes each figure in each format, and bad
// files and formats are errors that name them.
func TestReportAndPlot(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, "report", fixture)
	if err != nil || !strings.Contains(out, "goodput in Mbit/s, median of 3") {
		t.Fatalf("report: %v\n%s", err, out)
	}
	flame := filepath.Join(dir, "flame.svg")
	os.WriteFile(flame, []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), 0o644)
	page := filepath.Join(dir, "r.html")
	if out, err := run(t, "report", fixture, fixture, "--html", page, "--figure", flame); err != nil || strings.Count(out, "== ") != 2 {
		t.Fatalf("report --html: %v\n%s", err, out)
	}
	b, err := os.ReadFile(page)
	if err != nil || !bytes.Contains(b, []byte(`<section id="flames">`)) || !bytes.Contains(b, []byte(`class="comparison"`)) {
		t.Errorf("the page lacks the flamegraph or the comparison (%v)", err)
	}
	out, err = run(t, "plot", fixture, "--out", filepath.Join(dir, "p"), "--format", "svg,png")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"goodput-up.svg", "goodput-up.png", "cpu-up.svg", "cpu-up.png"} {
		if _, err := os.Stat(filepath.Join(dir, "p", want)); err != nil || !strings.Contains(out, want) {
			t.Errorf("plot did not write %s: %v\n%s", want, err, out)
		}
	}
	if _, err := run(t, "plot", fixture, "--out", filepath.Join(dir, "q"), "--format", "gif"); err == nil || !strings.Contains(err.Error(), `"gif"`) {
		t.Errorf("--format gif: %v", err)
	}
	good, _ := os.ReadFile(fixture)
	trunc := filepath.Join(dir, "trunc.json")
	os.WriteFile(trunc, good[:len(good)/3], 0o644)
	if _, err := run(t, "report", fixture, trunc, "--html", filepath.Join(dir, "bad.html")); err == nil || !strings.Contains(err.Error(), "trunc.json is not a kqbench results document") {
		t.Errorf("a truncated file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.html")); err == nil {
		t.Errorf("a page was written from a bad file")
	}
}
