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
	root.AddCommand(newDoctorCmd(), newVMCmd(), newKernelCmd(), newMatrixCmd(), newServerCmd(), newClientCmd(), newReportCmd(), newPerfCmd(), newCompareCmd(), newABCmd(), newFlameCmd())
	return root
}
