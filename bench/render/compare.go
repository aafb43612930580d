package render

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"kquic.dev/bench/results"
)

// Counters says which --explain counters a comparison shows.
type Counters int

// The counter views.
const (
	NoCounters Counters = iota
	// ChangedCounters: those not zero on either side, the significant
	// changes first (the largest first), then the rest by name.
	ChangedCounters
	// AllCounters: every counter both runs have, by name.
	AllCounters
)

// ComparisonView is how WriteComparison prints a comparison.
type ComparisonView struct {
	Counters Counters
	// Old and New head the two columns ("A", "B" for an A/B run); ""
	// takes the runs' labels, or "old" and "new".
	Old, New string
}

// WriteComparison prints the comparison as benchstat does: per cell the two
// medians with the interval's half-width in percent (the interval itself
// where it is wider than the median), the change ("from 0" where the old
// median is 0), and p; "~" where the difference is not significant. The
// counters per MB follow as v says.
func WriteComparison(w io.Writer, c *results.Comparison, v ComparisonView) error {
	if len(c.Differences) > 0 {
		fmt.Fprintf(w, "compared although the runs differ: %s\n\n", strings.Join(c.Differences, "; "))
	}
	if len(c.AlsoDiffer) > 0 {
		fmt.Fprintf(w, "the runs differ in %s\n\n", strings.Join(c.AlsoDiffer, "; "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	unit := "Mbit/s"
	if len(c.Cells) > 0 && c.Cells[0].Unit != "" {
		unit = c.Cells[0].Unit
	}
	oldName, newName := "old", "new"
	switch {
	case v.Old != "" && v.New != "":
		oldName, newName = v.Old, v.New
	case c.Old != "" && c.New != "" && c.Old != c.New:
		oldName, newName = c.Old, c.New
	}
	fmt.Fprintf(tw, "cell\t%s %s\t%s %s\tchange\tp\t\n", oldName, unit, newName, unit)
	left := 0
	row := func(name string, d results.Delta) {
		ch := "~"
		switch {
		case !d.Significant:
		case math.IsInf(d.ChangePct, 0):
			ch = "from 0"
		default:
			ch = fmt.Sprintf("%+.1f%%", d.ChangePct)
		}
		note := ""
		if d.Note != "" {
			note = " (" + d.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\t\n", name, pm(d.Old), pm(d.New), ch, pval(d), note)
	}
	for _, cc := range c.Cells {
		row(cc.Key, cc.Goodput)
		for _, d := range cc.Figures {
			row("  "+d.Name, d)
		}
		shown := counterRows(cc.Counters, v.Counters)
		for _, d := range shown {
			row("  "+d.Name+" /MB", d)
		}
		if v.Counters == ChangedCounters {
			left += len(cc.Counters) - len(shown)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if left > 0 {
		fmt.Fprintf(w, "(%d counters zero in both runs not shown; all of them with --all-counters)\n", left)
	}
	for _, k := range c.OnlyOld {
		fmt.Fprintf(w, "only in the old run: %s\n", k)
	}
	for _, k := range c.OnlyNew {
		fmt.Fprintf(w, "only in the new run: %s\n", k)
	}
	return nil
}

// counterRows are the counters the view shows, in its order.
func counterRows(ds []results.Delta, v Counters) []results.Delta {
	switch v {
	case AllCounters:
		return ds
	case ChangedCounters:
	default:
		return nil
	}
	var out []results.Delta
	for _, d := range ds {
		if !d.Zero {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b results.Delta) int {
		if a.Significant != b.Significant {
			if a.Significant {
				return -1
			}
			return 1
		}
		if a.Significant {
			return cmp.Compare(math.Abs(b.ChangePct), math.Abs(a.ChangePct))
		}
		return 0
	})
	return out
}

func pm(i results.Interval) string {
	if i.Center == 0 {
		return fmt.Sprintf("%.4g", i.Center)
	}
	half := math.Max(i.Hi-i.Center, i.Center-i.Lo) / math.Abs(i.Center) * 100
	switch {
	case math.IsInf(half, 0) || math.IsNaN(half):
		return fmt.Sprintf("%.4g ±? n=%d", i.Center, i.N) // too few samples for an interval
	case half > 100:
		// Wider than the median itself: a percentage says nothing.
		return fmt.Sprintf("%.4g [%.4g, %.4g] n=%d", i.Center, i.Lo, i.Hi, i.N)
	}
	return fmt.Sprintf("%.4g ±%.0f%% n=%d", i.Center, half, i.N)
}

func pval(d results.Delta) string {
	if math.IsNaN(d.P) {
		return "p=?"
	}
	return fmt.Sprintf("p=%.3f", d.P)
}

// WriteComparisonJSON writes the comparison as JSON.
func WriteComparisonJSON(w io.Writer, c *results.Comparison) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(c)
}

// WriteComparisonCSV writes one row per compared figure.
func WriteComparisonCSV(w io.Writer, c *results.Comparison) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"cell", "figure", "old_median", "old_lo", "old_hi", "old_n", "new_median", "new_lo", "new_hi", "new_n", "change_pct", "p", "significant"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	for _, cc := range c.Cells {
		for _, d := range append(append([]results.Delta{cc.Goodput}, cc.Figures...), cc.Counters...) {
			cw.Write([]string{cc.Key, d.Name, f(d.Old.Center), f(d.Old.Lo), f(d.Old.Hi), strconv.Itoa(d.Old.N),
				f(d.New.Center), f(d.New.Lo), f(d.New.Hi), strconv.Itoa(d.New.N), f(d.ChangePct), f(d.P), strconv.FormatBool(d.Significant)})
		}
	}
	cw.Flush()
	return cw.Error()
}
