//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench/ab"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

func newABCmd() *cobra.Command {
	var (
		vmf                vmFlags
		aModule, bModule   string
		aKernel, bKernel   string
		aModtree, bModtree string
		transports, sizes  []string
		mtus, gso, crypto  []string
		repeat, rounds     int
		sampleTime, warmup time.Duration
		dir                string
		force, counters    bool
		allCounters        bool
		reboot             bool
		profile            bool
		vmPeer             bool
	)
	cmd := &cobra.Command{
		Use:   "ab --a-module OLD/quic.ko --b-module NEW/quic.ko",
		Short: "A/B two QUIC module builds (or kernels) in guests, rounds alternating ABBA, and compare them",
		Long: `Measure the same matrix with two builds - two QUIC modules (--a-module,
--b-module), or two kernels (--a-kernel/--a-modtree, --b-kernel/--b-modtree) -
each in a guest booted for it, in alternating rounds A B B A A B B A, so
that a drift of the machine falls on both alike; then merge each side's
rounds and compare B against A as kqbench compare does.

Both guests stay up for the whole run and a round is --repeat samples of
every cell (one by default): the sides alternate sample by sample, with no
boot between. --reboot boots a fresh guest for every round instead, so
what differs from one boot to the next is sampled too.

Every round's results file and each side's merged one stay in --dir. On
hardware, where a side means a reboot, run kqbench matrix on each and
kqbench compare the files.

--vm-peer measures each side in two-host mode between two guests instead
(kqbench matrix --vm-peer: kqbench server in one, the matrix in the other,
joined by a virtio-net link), both with the side's module or kernel; every
round boots its pair.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if aModule == "" && aKernel == "" || bModule == "" && bKernel == "" {
				return errors.New("ab: give each side a module (--a-module, --b-module) or a kernel (--a-kernel, --b-kernel)")
			}
			for _, p := range []string{aModule, bModule, aKernel, bKernel} {
				if p != "" {
					if _, err := os.Stat(p); err != nil {
						return fmt.Errorf("ab: %w", err)
					}
				}
			}
			if dir == "" {
				dir = filepath.Join("results", "ab-"+time.Now().Format("20060102-150405"))
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("ab: %w", err)
			}
			absDir, _ := filepath.Abs(dir)
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			// Each side names its own module: not the environment's.
			os.Unsetenv(envModule)
			// roundArgs are a round's matrix flags, but its results file.
			roundArgs := func() []string {
				args := []string{"--quiet",
					"--transports", joinList(transports), "--sizes", joinList(sizes),
					"--mtus", joinList(mtus), "--gso", joinList(gso), "--crypto", joinList(crypto),
					"--repeat", strconv.Itoa(repeat), "--time", sampleTime.String(), "--warmup", warmup.String()}
				if counters || allCounters {
					args = append(args, "--explain")
				}
				if profile {
					args = append(args, "--profile")
				}
				return args
			}
			side := func(name, module, kernel, modtree string) ab.Side {
				v := vmf
				v.cfg.Shares = append(append([]string(nil), vmf.cfg.Shares...), absDir)
				v.load = append(append([]string(nil), vmf.load...), "tls", "veth", "sch_netem", "udp_tunnel", "ip6_udp_tunnel", "aesni_intel?")
				if module != "" {
					v.cfg.ModuleFiles = []string{module}
				}
				if kernel != "" {
					v.cfg.Kernel, v.cfg.Modules = kernel, modtree
				}
				if vmPeer {
					return abVMPeerSide(cmd, v, name, roundArgs)
				}
				if f := cmd.Flags().Lookup("timeout"); !f.Changed {
					v.cfg.Timeout = 24 * time.Hour // a kept guest lives for the whole run
				}
				var g *ab.Guest
				closeGuest := func() error {
					if g == nil {
						return nil
					}
					err := g.Close()
					g = nil
					return err
				}
				return ab.Side{Name: name, Close: closeGuest, Run: func(ctx context.Context, round int, out string) error {
					if g == nil {
						worker := []string{exe, "ab-worker"}
						cfg, err := v.config(cmd, worker)
						if err != nil {
							return err
						}
						g = ab.StartGuest(ctx, cfg, worker)
					}
					err := g.Round(append([]string{"--out", out}, roundArgs()...))
					if reboot || err != nil {
						if cerr := closeGuest(); err == nil {
							err = cerr
						}
					}
					return err
				}}
			}
			res, err := ab.Run(cmd.Context(), side("A", aModule, aKernel, aModtree), side("B", bModule, bKernel, bModtree),
				ab.Options{Rounds: rounds, Dir: dir, Compare: results.CompareOptions{Force: force}, Log: cmd.ErrOrStderr(), Profile: profile})
			if res != nil && res.Comparison != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "B against A, %d rounds each in the order %v:\n", rounds, res.Order)
				render.WriteComparison(cmd.OutOrStdout(), res.Comparison, render.ComparisonView{Counters: counterView(counters, allCounters), Old: "A", New: "B"})
				render.WriteRatioChanges(cmd.OutOrStdout(), res.A, res.B, 0.05)
				if len(res.Flames) > 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "\ndifferential flamegraphs (red: B spends more, blue: less):\n")
					for _, fl := range res.Flames {
						fmt.Fprintf(cmd.OutOrStdout(), "  %s  (%d samples A, %d B)\n", fl.Diff, fl.SamplesA, fl.SamplesB)
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "\nresults: %s (every round; A.json and B.json merged)\n", dir)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&aModule, "a-module", "", "side A's quic.ko")
	f.StringVar(&bModule, "b-module", "", "side B's quic.ko")
	f.StringVar(&aKernel, "a-kernel", "", "side A's kernel image (default: the pinned Debian kernel)")
	f.StringVar(&bKernel, "b-kernel", "", "side B's kernel image")
	f.StringVar(&aModtree, "a-modtree", "", "side A's module tree (lib/modules/<release>)")
	f.StringVar(&bModtree, "b-modtree", "", "side B's module tree")
	f.StringSliceVar(&transports, "transports", []string{"kquic"}, "transports to measure")
	f.StringSliceVar(&sizes, "sizes", []string{"1K", "16K"}, "message sizes")
	f.StringSliceVar(&mtus, "mtus", []string{"1500"}, "MTUs")
	f.StringSliceVar(&gso, "gso", []string{"on"}, "GSO on, off or both")
	f.StringSliceVar(&crypto, "crypto", []string{"on"}, "encryption on, off or both")
	f.IntVar(&repeat, "repeat", 1, "samples per cell in each round")
	f.IntVar(&rounds, "rounds", 8, "rounds per side (ABBA order)")
	f.BoolVar(&vmPeer, "vm-peer", false, "measure each side between two guests joined by a virtio-net link (kqbench matrix --vm-peer), both with the side's module; a pair boots for every round")
	f.BoolVar(&reboot, "reboot", false, "boot a fresh guest for every round (default: each side's guest stays up)")
	f.DurationVar(&sampleTime, "time", 2*time.Second, "length of a sample")
	f.DurationVar(&warmup, "warmup", 500*time.Millisecond, "warm-up before a sample")
	f.StringVar(&dir, "dir", "", "directory for the results (default results/ab-<time>)")
	f.BoolVar(&force, "force", false, "compare even if the sides' environments differ (a kernel A/B does)")
	f.BoolVar(&profile, "profile", false, "profile every sample with perf (kqbench matrix --profile) and draw each cell's differential flamegraph, B against A")
	f.BoolVar(&counters, "counters", false, "measure with --explain and compare its counters per MB too (packets, syscalls: why): those not zero on both sides, the significant changes first")
	f.BoolVar(&allCounters, "all-counters", false, "with --counters: show every counter, zero or not, by name")
	vmf.register(cmd)
	return cmd
}

func joinList(v []string) string { return strings.Join(splitList(v), ",") }

// newABWorkerCmd is the guest's end of kqbench ab: each line of standard
// input is one round's matrix arguments; the round's output goes to
// standard error (its results are in its file) and a line on standard
// output says how it ended.
func newABWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "ab-worker",
		Short:  "Run kqbench ab's rounds in a guest (started by kqbench ab)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			return ab.Serve(cmd.InOrStdin(), cmd.OutOrStdout(), func(args []string) error {
				c := exec.CommandContext(cmd.Context(), exe, append([]string{"matrix"}, args...)...)
				c.Stderr = cmd.ErrOrStderr()
				if err := c.Run(); err != nil {
					return fmt.Errorf("kqbench matrix %s: %w", strings.Join(args, " "), err)
				}
				return nil
			})
		},
	}
}
