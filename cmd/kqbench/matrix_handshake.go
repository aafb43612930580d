//go:build linux

package main

import (
	"errors"

	"github.com/spf13/cobra"
	"kquic.dev/bench/matrix"
)

// applyMode sets the defaults of --mode handshake where the flags were not
// given: a 64-byte request and answer, MTU 1500, GSO on, one handshake at a
// time.
func applyMode(cmd *cobra.Command, spec *matrix.Spec) error {
	if spec.Mode != matrix.ModeHandshake {
		return nil
	}
	f := cmd.Flags()
	if f.Changed("peer") {
		return errors.New("matrix: --mode handshake runs on the single-host topology only (or in the guest with --vm); drop --peer")
	}
	if !f.Changed("sizes") {
		spec.Sizes = []int{64}
	}
	if !f.Changed("mtus") {
		spec.MTUs = []int{1500}
	}
	if !f.Changed("gso") {
		spec.GSO = []bool{true}
	}
	return nil
}
