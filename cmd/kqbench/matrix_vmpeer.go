//go:build linux

package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/vmpeer"
	"kquic.dev/kmod/vm"
)

// vmPeerHelp is matrix --help's part on --vm-peer.
const vmPeerHelp = `

With --vm-peer the matrix runs in two-host mode between two qemu guests on
this machine, joined by a virtio-net link (see kqbench vm --help): guest B
runs kqbench server on its eth0, guest A kqbench matrix --peer against it on
its own, with a token and the server's fingerprint pinned, each cell setting
both ends' virtio_net device (GSO off: TSO and GSO off and gso_max_size the
MTU, on the driver itself). Each guest boots its own kernel and module:
--module (or $KQUIC_MODULE) for both, --b-module for B's (none for none),
--b-kernel/--b-modules for B's kernel. The results file records both
kernels, boot IDs and modules, the driver with its offloads and interrupts,
and "two guests on one host" as the topology; the tables say so.`

// vmPeerFlags are the flags --vm-peer passes on to the matrix in guest A:
// every flag the user set, but the guests', the link's and those the
// two-host mode sets itself.
func vmPeerFlags(cmd *cobra.Command) []string {
	skip := map[string]bool{"vm-peer": true, "vm": true, "out": true, "csv": true, "resume": true,
		"peer": true, "dev": true, "token": true, "fingerprint": true}
	scratch := &cobra.Command{}
	(&vmFlags{}).register(scratch)
	(&pairFlags{}).registerB(scratch)
	scratch.Flags().VisitAll(func(f *pflag.Flag) { skip[f.Name] = true })
	var args []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if skip[f.Name] {
			return
		}
		v := f.Value.String()
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			v = strings.Join(sv.GetSlice(), ",")
		}
		args = append(args, "--"+f.Name+"="+v)
	})
	return args
}

// runMatrixVMPeer runs the matrix between two guests (vmpeer.Run), then
// prints the tables of the results as recorded.
func runMatrixVMPeer(cmd *cobra.Command, vmf *vmFlags, pf *pairFlags, spec matrix.Spec, out, csvOut string, explain bool) error {
	a, err := vmf.config(cmd, nil)
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("timeout") {
		a.Timeout = spec.Plan() + vm.BootMargin
		fmt.Fprintf(cmd.ErrOrStderr(), "matrix: the guests have %v (the plan of %d cells, up to %d samples each, and the boot; --timeout to change it)\n",
			a.Timeout.Round(time.Second), len(spec.Cells()), spec.MaxSamples())
	}
	pc, err := pf.pairConfig(cmd, a, nil)
	if err != nil {
		return err
	}
	// The link's host side (taps, bridge) carries the largest MTU of the
	// run; each cell sets the guests' devices to its own.
	top := slices.Max(spec.MTUs)
	if !cmd.Flags().Changed("link-mtu") {
		pc.Link.MTU = top
	} else if pc.Link.MTU < top {
		return fmt.Errorf("matrix --vm-peer: --link-mtu %d is below --mtus %d: give --link-mtu %d or more (or leave it out)", pc.Link.MTU, top, top)
	}
	if !strings.HasSuffix(out, ".json") || csvOut != strings.TrimSuffix(out, ".json")+".csv" {
		return fmt.Errorf("matrix --vm-peer: the CSV goes beside the results file (%s.csv): give --out FILE.json and no --csv", strings.TrimSuffix(out, ".json"))
	}
	var stdout bytes.Buffer // the guest's tables, replaced by the recorded run's
	res, err := vmpeer.Run(cmd.Context(), vmpeer.Config{
		A: pc.A, B: pc.B, Link: pc.Link, PeerGrace: pc.PeerGrace,
		Args: vmPeerFlags(cmd), Out: out,
		Stdout: &stdout, Stderr: cmd.ErrOrStderr(), PeerOut: pc.B.Stdout,
	})
	for _, w := range []any{pc.B.Stdout, pc.A.Console, pc.B.Console} {
		if pw, ok := w.(*prefixWriter); ok {
			pw.flush()
		}
	}
	if res != nil && res.Pair != nil {
		writePairSummary(cmd.ErrOrStderr(), res.Pair)
	}
	w := cmd.OutOrStdout()
	if res == nil || res.Doc == nil {
		w.Write(stdout.Bytes())
		return err
	}
	fmt.Fprintln(w)
	render.WriteTables(w, res.Doc)
	render.WriteRatios(w, res.Doc)
	if explain {
		fmt.Fprintln(w)
		render.WriteExplain(w, res.Doc)
	}
	fmt.Fprintf(w, "\nresults: %s (every sample, both guests recorded), %s\n", out, csvOut)
	return err
}
