package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"kquic.dev/bench/plot"
	"kquic.dev/bench/results"
)

// WritePlots writes the figures of every run into dir in each format (see
// plot.Formats) and, with two or more runs, the change figures of each
// later run against the first. With one run the files are named after the
// figures ("goodput-up.svg"); with several, each run's carry its file's stem
// ("run1-goodput-up.svg") and a comparison's both stems
// ("run2-vs-run1-change-goodput-up.svg"). It returns the paths written, and
// why a comparison drew nothing (runs that differ without o.Force, no cell
// in common).
func WritePlots(dir string, runs []Run, formats []string, o results.CompareOptions) (paths, notes []string, err error) {
	stem := func(r Run) string {
		return strings.TrimSuffix(filepath.Base(r.Name), filepath.Ext(r.Name))
	}
	names := make([]string, len(runs))
	taken := map[string]bool{}
	for i, r := range runs {
		names[i] = stem(r)
		if taken[names[i]] {
			names[i] = fmt.Sprintf("%s%d", stem(r), i+1)
		}
		taken[names[i]] = true
	}
	for i, r := range runs {
		prefix := ""
		if len(runs) > 1 {
			prefix = names[i] + "-"
		}
		ps, err := plot.WriteFiles(dir, prefix, plot.All(r.Doc), formats)
		paths = append(paths, ps...)
		if err != nil {
			return paths, notes, err
		}
	}
	for i := 1; i < len(runs); i++ {
		c, err := results.Compare(runs[0].Doc, runs[i].Doc, o)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s against %s: %v", runs[i].Name, runs[0].Name, err))
		}
		if c == nil || len(c.Cells) == 0 {
			continue
		}
		prefix := fmt.Sprintf("%s-vs-%s-", names[i], names[0])
		ps, err := plot.WriteFiles(dir, prefix, plot.Change(c, runs[0].Doc.Spec), formats)
		paths = append(paths, ps...)
		if err != nil {
			return paths, notes, err
		}
	}
	return paths, notes, nil
}
