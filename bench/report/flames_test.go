package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kquic.dev/bench/results"
)

// TestCellFlames finds the cells' flamegraphs next to their results file,
// and names a missing one while keeping the rest.
func TestCellFlames(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "profiles"), 0o755)
	os.WriteFile(filepath.Join(dir, "profiles", "a.svg"), []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`), 0o644)
	d := &results.Document{Cells: []results.CellResult{
		{Key: "kquic/a", ProfileSVG: "profiles/a.svg"},
		{Key: "kquic/b", ProfileSVG: "profiles/b.svg"},
		{Key: "tcp/none"},
	}}
	figs, err := CellFlames([]Run{{Name: filepath.Join(dir, "m.json"), Doc: d}})
	if len(figs) != 1 || !strings.Contains(figs[0].Title, "kquic/a") || !strings.Contains(string(figs[0].SVG), "<svg") {
		t.Errorf("figures %+v", figs)
	}
	if err == nil || !strings.Contains(err.Error(), "kquic/b") {
		t.Errorf("err = %v, want the missing kquic/b named", err)
	}
}
