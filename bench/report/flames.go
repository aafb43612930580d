package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// CellFlames reads the flamegraphs kqbench matrix --profile drew for the
// runs' cells (CellResult.ProfileSVG, relative to the results file named by
// Run.Name), titled by run and cell. A flamegraph that cannot be read is
// reported in the error and left out; the others are returned.
func CellFlames(runs []Run) ([]Figure, error) {
	var out []Figure
	var errs []string
	for _, r := range runs {
		for _, c := range r.Doc.Cells {
			if c.ProfileSVG == "" {
				continue
			}
			p := c.ProfileSVG
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(r.Name), p)
			}
			svg, err := os.ReadFile(p)
			if err == nil && !bytes.Contains(svg, []byte("<svg")) {
				err = fmt.Errorf("%s is not an SVG image", p)
			}
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s, cell %s: %v", r.Name, c.Key, err))
				continue
			}
			out = append(out, Figure{Title: fmt.Sprintf("%s: %s", filepath.Base(r.Name), c.Key), SVG: svg})
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("flamegraphs left out: %s", bytes.Join(toBytes(errs), []byte("; ")))
	}
	return out, nil
}

func toBytes(s []string) [][]byte {
	b := make([][]byte, len(s))
	for i, v := range s {
		b[i] = []byte(v)
	}
	return b
}
