//go:build linux

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
	for _, c := range []*cobra.Command{
		newDoctorCmd(), newVMCmd(), newKernelCmd(), newMatrixCmd(), newServerCmd(), newClientCmd(),
		newReportCmd(), newPlotCmd(),
		newPerfCmd(), newCompareCmd(),
		newABCmd(), newABWorkerCmd(),
		newFlameCmd(), newAgentCmd(),
	} {
		root.AddCommand(c)
	}
	return root
}
