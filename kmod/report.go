//go:build linux

package kmod

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteReport prints check results as a table, one line per feature, with
// what to do for each feature that is missing.
func WriteReport(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FEATURE\tSTATUS\tDETAIL")
	for _, r := range results {
		st, detail := "ok", r.Detail
		if !r.OK() {
			st, detail = "MISSING", r.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Title, st, oneLine(detail))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	first := true
	for _, r := range results {
		if r.OK() || r.Fix == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nWhat to do:")
			first = false
		}
		fmt.Fprintf(w, "  %s: %s\n", r.Feature, r.Fix)
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
