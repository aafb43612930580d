//go:build linux

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"kquic.dev/kmod/debkernel"
)

type kernelFlags struct {
	opts debkernel.Options
}

func (k *kernelFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&k.opts.Release, "debian-release", debkernel.DefaultRelease, "Debian kernel release to fetch when --kernel is not given")
	f.StringVar(&k.opts.Suite, "debian-suite", debkernel.DefaultSuite, "Debian suite to fetch it from")
	f.BoolVar(&k.opts.Exact, "exact", false, "fail instead of using the suite's current kernel when the release is gone")
	f.StringVar(&k.opts.CacheDir, "cache", "", "cache directory (default $"+debkernel.CacheEnv+", else the .cache of the kquic checkout you are in, else ~/.cache/kquic)")
}

func newKernelCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "kernel", Short: "Manage the guest kernel"}
	var k kernelFlags
	fetch := &cobra.Command{
		Use:   "fetch",
		Short: "Download and unpack the Debian guest kernel into the cache, and print where it is",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k.opts.Log = cmd.ErrOrStderr()
			kern, err := debkernel.Ensure(cmd.Context(), k.opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "release  %s (package %s, %s)\nimage    %s\nmodules  %s\n", kern.Release, kern.Package, kern.Suite, kern.Image, kern.Modules)
			if kern.Note != "" {
				fmt.Fprintf(out, "note     %s\n", kern.Note)
			}
			return nil
		},
	}
	k.register(fetch)
	cmd.AddCommand(fetch)
	return cmd
}
