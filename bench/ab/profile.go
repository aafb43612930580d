package ab

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"kquic.dev/bench/flame"
	"kquic.dev/bench/results"
)

// Flame is one cell's profiles on the two sides, merged over the rounds,
// and the differential flamegraph of B against A.
type Flame struct {
	Key string
	// A and B are the sides' merged folded stacks, Diff the SVG (paths
	// in Options.Dir).
	A, B, Diff string
	// SamplesA and SamplesB are the stacks' sample counts.
	SamplesA, SamplesB int64
}

// round is one round's results document and the file it came from.
type round struct {
	doc  *results.Document
	path string
}

// writeFlames merges each side's folded stacks (kqbench matrix --profile)
// cell by cell over its rounds, writes them to dir/profiles as
// <cell>.A.folded and <cell>.B.folded, and draws B against A in
// <cell>.diff.svg. A cell with no stacks on a side is skipped; none at all
// is an error.
func writeFlames(dir string, names [2]string, rounds [2][]round) ([]Flame, error) {
	var merged [2]map[string]flame.Folded
	var errs []error
	for s := range rounds {
		merged[s] = map[string]flame.Folded{}
		for _, r := range rounds[s] {
			for _, c := range r.doc.Cells {
				if c.Profile == "" {
					continue
				}
				p := c.Profile
				if !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(r.path), p)
				}
				f, err := flame.ReadFoldedFile(p)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if merged[s][c.Key] == nil {
					merged[s][c.Key] = flame.Folded{}
				}
				merged[s][c.Key].Merge(f)
			}
		}
	}
	var keys []string
	for k := range merged[0] {
		if merged[1][k] != nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return nil, errors.Join(append(errs, errors.New("ab: no cell has profiles on both sides (were the rounds run with --profile?)"))...)
	}
	out := filepath.Join(dir, "profiles")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("ab: %w", err)
	}
	var flames []Flame
	for _, k := range keys {
		a, b := merged[0][k], merged[1][k]
		base := filepath.Join(out, strings.NewReplacer("/", "_", "=", "-").Replace(k))
		fl := Flame{Key: k, A: base + "." + names[0] + ".folded", B: base + "." + names[1] + ".folded", Diff: base + ".diff.svg",
			SamplesA: a.Total(), SamplesB: b.Total()}
		if err := a.WriteFile(fl.A); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := b.WriteFile(fl.B); err != nil {
			errs = append(errs, err)
			continue
		}
		var svg bytes.Buffer
		err := flame.DiffSVG(&svg, a, b, flame.Options{
			Title: fmt.Sprintf("%s against %s: %s", names[1], names[0], k),
		})
		if err == nil {
			err = os.WriteFile(fl.Diff, svg.Bytes(), 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("ab: %s: %w", k, err))
			continue
		}
		flames = append(flames, fl)
	}
	return flames, errors.Join(errs...)
}
