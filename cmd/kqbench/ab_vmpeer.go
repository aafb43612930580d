//go:build linux

package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench/ab"
	"kquic.dev/bench/vmpeer"
)

// abVMPeerSide is a side of `kqbench ab --vm-peer`: every round boots a pair
// of guests, both with the side's module (or kernel), and runs the round's
// matrix between them as matrix --vm-peer does (kqbench server in B, the
// matrix in A, over the virtio-net link).
func abVMPeerSide(cmd *cobra.Command, v vmFlags, name string, args func() []string) ab.Side {
	return ab.Side{Name: name, Run: func(ctx context.Context, round int, out string) error {
		cfg, err := v.config(cmd, nil)
		if err != nil {
			return err
		}
		if !cmd.Flags().Changed("timeout") {
			cfg.Timeout = 30 * time.Minute
		}
		peer := newPrefixWriter(cmd.ErrOrStderr(), "["+name+" server] ")
		defer peer.flush()
		_, err = vmpeer.Run(ctx, vmpeer.Config{A: cfg, B: cfg, Args: args(), Out: out,
			Stdout: io.Discard, Stderr: cmd.ErrOrStderr(), PeerOut: peer})
		return err
	}}
}
