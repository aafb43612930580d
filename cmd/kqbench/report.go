//go:build linux

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"kquic.dev/bench"
)

func newReportCmd() *cobra.Command {
	var explain bool
	cmd := &cobra.Command{
		Use:   "report RESULTS.json",
		Short: "Print the tables of a matrix results file (and, with --explain, its counters)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			doc, err := bench.Load(args[0])
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			if err := bench.WriteTables(cmd.OutOrStdout(), doc); err != nil {
				return err
			}
			if explain {
				fmt.Fprintln(cmd.OutOrStdout())
				return bench.WriteExplain(cmd.OutOrStdout(), doc)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&explain, "explain", false, "also print the per-MB counters")
	return cmd
}
