//go:build linux

package main

import (
	"github.com/spf13/cobra"

	"kquic.dev/kmod"
)

func newDoctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Show which kernel features this machine has, and what to do about missing ones",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return kmod.WriteReport(cmd.OutOrStdout(), kmod.Check())
		},
	}
}
