package main

import (
	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "kqbench",
		Short:         "Benchmark and check kernel QUIC, kernel TLS, TCP and quic-go",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, c := range append([]*cobra.Command{newReportCmd(), newPlotCmd(), newCompareCmd(), newFlameCmd()}, platformCommands()...) {
		root.AddCommand(c)
	}
	return root
}
