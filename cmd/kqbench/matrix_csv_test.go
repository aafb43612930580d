//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kquic.dev/bench/results"
)

// TestMatrixCSVNotWritten: a CSV path the matrix cannot write is an error
// that names it and says what to do, after the tables, and the results file
// stays as the run wrote it; doing what it says writes the CSV the run would
// have.
func TestMatrixCSVNotWritten(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(benchData, "results", "bulk-old.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "m.json")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	// Under a file: not writable, even as root.
	bad := filepath.Join(out, "m.csv")
	var w bytes.Buffer
	err = printMatrix(&w, doc, matrixOutput{out: out, csv: bad})
	if err == nil || !strings.Contains(err.Error(), "the CSV summary "+bad+" was not written") ||
		!strings.Contains(err.Error(), "kqbench report --csv FILE "+out) {
		t.Errorf("unwritable CSV: %v, want an error naming it and what to do", err)
	}
	printed := w.String()
	if !strings.Contains(printed, "goodput in Mbit/s") || !strings.Contains(printed, "results: "+out+" (every sample); no CSV summary") {
		t.Errorf("printed:\n%s", printed)
	}
	if strings.Contains(printed, bad) {
		t.Errorf("the CSV that was not written is printed as results:\n%s", printed)
	}
	if kept, err := os.ReadFile(out); err != nil || !bytes.Equal(kept, b) {
		t.Errorf("the results file was not kept as written (%v)", err)
	}

	// What the error says to do, against what a writable path gets.
	good, again := filepath.Join(dir, "m.csv"), filepath.Join(dir, "again.csv")
	w.Reset()
	if err := printMatrix(&w, doc, matrixOutput{out: out, csv: good}); err != nil || !strings.Contains(w.String(), "results: "+out+" (every sample), "+good) {
		t.Fatalf("writable CSV: %v\n%s", err, w.String())
	}
	if o, err := run(t, "report", "--csv", again, out); err != nil {
		t.Fatalf("report --csv: %v\n%s", err, o)
	}
	want, _ := os.ReadFile(good)
	got, _ := os.ReadFile(again)
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("report --csv wrote %q, the matrix %q", got, want)
	}
	if _, err := run(t, "report", "--csv", again, out, out); err == nil || !strings.Contains(err.Error(), "one results file") {
		t.Errorf("report --csv of two files: %v", err)
	}
}
