package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

func newCompareCmd() *cobra.Command {
	var (
		o                     results.CompareOptions
		format                string
		counters, allCounters bool
	)
	cmd := &cobra.Command{
		Use:   "compare OLD.json NEW.json",
		Short: "Compare two matrix runs cell by cell: medians, change, and whether it is significant",
		Long: `Compare the cells two kqbench matrix results files have in common, as
benchstat compares benchmarks: per cell the two median goodputs with their 95%
intervals, the change, and the p value of a Mann-Whitney U test over the
repeats, with "~" where the difference is not significant; with --counters
the --explain counters per MB the same way, so the answer says why.

Runs whose environments differ in what changes the figures (CPU, machine
kind, kqbench version, message sizes, a cell's MTU or offloads) are refused,
with the list, unless --force.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			old, err := results.Load(args[0])
			if err != nil {
				return fmt.Errorf("compare: %w", err)
			}
			new, err := results.Load(args[1])
			if err != nil {
				return fmt.Errorf("compare: %w", err)
			}
			c, err := results.Compare(old, new, o)
			if err != nil {
				return fmt.Errorf("compare %s and %s: %w", args[0], args[1], err)
			}
			switch format {
			case "table":
				if err := render.WriteComparison(cmd.OutOrStdout(), c, render.ComparisonView{Counters: counterView(counters, allCounters)}); err != nil {
					return err
				}
				return render.WriteRatioChanges(cmd.OutOrStdout(), old, new, o.Alpha)
			case "json":
				return render.WriteComparisonJSON(cmd.OutOrStdout(), c)
			case "csv":
				return render.WriteComparisonCSV(cmd.OutOrStdout(), c)
			}
			return fmt.Errorf("compare: --format %q: use table, json or csv", format)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Force, "force", false, "compare runs whose environments differ (the differences are listed)")
	f.Float64Var(&o.Alpha, "alpha", 0.05, "significance level")
	f.StringVar(&format, "format", "table", "output: table, json or csv")
	f.BoolVar(&counters, "counters", false, "also compare the --explain counters per MB: those not zero in both runs, the significant changes first")
	f.BoolVar(&allCounters, "all-counters", false, "with every counter, zero or not, by name")
	return cmd
}

// counterView is the counters a comparison shows for --counters and
// --all-counters.
func counterView(counters, all bool) render.Counters {
	switch {
	case all:
		return render.AllCounters
	case counters:
		return render.ChangedCounters
	}
	return render.NoCounters
}
