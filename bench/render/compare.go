package render

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"kquic.dev/bench/results"
)

// WriteComparison prints the comparison as benchstat does: per cell the two
// medians with the interval's half-width in percent, the change, and p;
// "~" where the difference is not significant. Counters follow with
// --counters.
func WriteComparison(w io.Writer, c *results.Comparison, counters bool) error {
	if len(c.Differences) > 0 {
		fmt.Fprintf(w, "compared although the runs differ: %s\n\n", strings.Join(c.Differences, "; "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	unit := "Mbit/s"
	if len(c.Cells) > 0 && c.Cells[0].Goodput.Name == "handshakes/s" {
		unit = "handshakes/s"
	}
	oldName, newName := "old", "new"
	if c.Old != "" && c.New != "" && c.Old != c.New {
		oldName, newName = c.Old, c.New
	}
	fmt.Fprintf(tw, "cell\t%s %s\t%s %s\tchange\tp\t\n", oldName, unit, newName, unit)
	row := func(name string, d results.Delta) {
		ch := "~"
		if d.Significant {
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
		for _, d := range cc.RR {
			row("  "+d.Name, d)
		}
		if counters {
			for _, d := range cc.Counters {
				row("  "+d.Name+" /MB", d)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, k := range c.OnlyOld {
		fmt.Fprintf(w, "only in the old run: %s\n", k)
	}
	for _, k := range c.OnlyNew {
		fmt.Fprintf(w, "only in the new run: %s\n", k)
	}
	return nil
}

func pm(i results.Interval) string {
	if i.Center == 0 {
		return fmt.Sprintf("%.4g", i.Center)
	}
	half := math.Max(i.Hi-i.Center, i.Center-i.Lo) / math.Abs(i.Center) * 100
	if math.IsInf(half, 0) || math.IsNaN(half) {
		return fmt.Sprintf("%.4g ±? n=%d", i.Center, i.N) // too few samples for an interval
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
		for _, d := range append(append([]results.Delta{cc.Goodput}, cc.RR...), cc.Counters...) {
			cw.Write([]string{cc.Key, d.Name, f(d.Old.Center), f(d.Old.Lo), f(d.Old.Hi), strconv.Itoa(d.Old.N),
				f(d.New.Center), f(d.New.Lo), f(d.New.Hi), strconv.Itoa(d.New.N), f(d.ChangePct), f(d.P), strconv.FormatBool(d.Significant)})
		}
	}
	cw.Flush()
	return cw.Error()
}
