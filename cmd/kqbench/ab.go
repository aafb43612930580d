//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench/ab"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// abFlags are kqbench ab's flags.
type abFlags struct {
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
	mode               string
	// The verdict: the metric, the threshold and the level of the tests,
	// and whether it becomes the exit status.
	metric, threshold string
	alpha             float64
	exitCode          bool
	improvement       bool
}

func newABCmd() *cobra.Command {
	a := &abFlags{}
	cmd := &cobra.Command{
		Use:   "ab --a-module OLD/quic.ko|src:DIR@REF --b-module NEW/quic.ko|src:DIR@REF",
		Short: "A/B two QUIC module builds (or kernels) in guests, rounds alternating ABBA, and compare them",
		Long:  abHelp,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.run(cmd) },
	}
	a.register(cmd)
	return cmd
}

// abHelp is ab --help's text.
const abHelp = `Measure the same matrix with two builds - two QUIC modules (--a-module,
--b-module), or two kernels (--a-kernel/--a-modtree, --b-kernel/--b-modtree) -
each in a guest booted for it, in alternating rounds A B B A A B B A, so
that a drift of the machine falls on both alike; then merge each side's
rounds and compare B against A as kqbench compare does.

A module is a .ko file, or its source: src:DIR builds the files of DIR,
src:DIR@REF a commit of the git checkout DIR lies in (DIR the module's
directory, or the top of an lxin/quic tree), as kqbench module build does,
for the guest kernel, cached: two commits of a tree are one command,

  kqbench ab --a-module src:~/src/quic@v1 --b-module src:~/src/quic@main

The run ends with a verdict on B against A: on --metric, per cell, B is
worse where it is below A by more than --threshold (above, for a metric
where lower is better) by a one-sided Mann-Whitney U test of B against A's
samples shifted by the threshold at --alpha, the same where it is
significantly on the good side of that line, and undecided where the
samples tell neither (too few, too noisy, or the change close to the
threshold). With --exit-code the verdict is the exit status, as git bisect
run reads it: 0 the same (good), 1 worse (bad), 125 undecided or failed
(skip), so that

  git bisect run kqbench ab --exit-code --a-module src:$PWD@GOOD --b-module src:$PWD@HEAD

drives a bisection (kqbench bisect does the whole of it, with more rounds
for an undecided step).

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
round boots its pair.`

// register adds the flags to cmd.
func (a *abFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&a.aModule, "a-module", "", "side A's quic.ko")
	f.StringVar(&a.bModule, "b-module", "", "side B's quic.ko")
	f.StringVar(&a.aKernel, "a-kernel", "", "side A's kernel image (default: the pinned Debian kernel)")
	f.StringVar(&a.bKernel, "b-kernel", "", "side B's kernel image")
	f.StringVar(&a.aModtree, "a-modtree", "", "side A's module tree (lib/modules/<release>)")
	f.StringVar(&a.bModtree, "b-modtree", "", "side B's module tree")
	f.StringSliceVar(&a.transports, "transports", []string{"kquic"}, "transports to measure")
	f.StringSliceVar(&a.sizes, "sizes", []string{"1K", "16K"}, "message sizes")
	f.StringSliceVar(&a.mtus, "mtus", []string{"1500"}, "MTUs")
	f.StringSliceVar(&a.gso, "gso", []string{"on"}, "GSO on, off or both")
	f.StringSliceVar(&a.crypto, "crypto", []string{"on"}, "encryption on, off or both")
	f.IntVar(&a.repeat, "repeat", 1, "samples per cell in each round")
	f.IntVar(&a.rounds, "rounds", 8, "rounds per side (ABBA order)")
	f.BoolVar(&a.exitCode, "exit-code", false, "exit with the verdict: 0 B is the same as A, 1 worse beyond --threshold, 125 undecided (or the run failed): git bisect run's good, bad and skip")
	f.BoolVar(&a.vmPeer, "vm-peer", false, "measure each side between two guests joined by a virtio-net link (kqbench matrix --vm-peer), both with the side's module; a pair boots for every round")
	f.BoolVar(&a.reboot, "reboot", false, "boot a fresh guest for every round (default: each side's guest stays up)")
	f.DurationVar(&a.sampleTime, "time", 2*time.Second, "length of a sample")
	f.DurationVar(&a.warmup, "warmup", 500*time.Millisecond, "warm-up before a sample")
	f.StringVar(&a.dir, "dir", "", "directory for the results (default results/ab-<time>)")
	f.BoolVar(&a.force, "force", false, "compare even if the sides' environments differ (a kernel A/B does)")
	f.BoolVar(&a.profile, "profile", false, "profile every sample with perf (kqbench matrix --profile) and draw each cell's differential flamegraph, B against A")
	f.BoolVar(&a.counters, "counters", false, "measure with --explain and compare its counters per MB too (packets, syscalls: why): those not zero on both sides, the significant changes first")
	f.BoolVar(&a.allCounters, "all-counters", false, "with --counters: show every counter, zero or not, by name")
	f.StringVar(&a.mode, "mode", "", "what a cell measures, as kqbench matrix --mode (default bulk)")
	f.StringVar(&a.metric, "metric", "", "the verdict's figure: "+ab.MetricNames()+" (default: "+defaultMetrics()+")")
	f.StringVar(&a.threshold, "threshold", "5%", "how much worse B may be before the verdict says worse, in percent of A")
	f.Float64Var(&a.alpha, "alpha", 0.05, "significance level of the verdict's tests")
	f.BoolVar(&a.improvement, "improvement", false, "turn the verdict round: worse (exit 1) where B is better than A by more than --threshold, to bisect a change for the better")
	a.vmf.register(cmd)
}

// run checks the sides, runs the rounds, prints B against A and the
// verdict, and with --exit-code exits with it.
func (a *abFlags) run(cmd *cobra.Command) error {
	if a.aModule == "" && a.aKernel == "" || a.bModule == "" && a.bKernel == "" {
		return errors.New("ab: give each side a module (--a-module, --b-module) or a kernel (--a-kernel, --b-kernel)")
	}
	judge, err := a.judgeOptions()
	if err != nil {
		return fmt.Errorf("ab: %w", err)
	}
	for _, p := range []string{a.aKernel, a.bKernel} {
		if p != "" {
			if _, err := os.Stat(p); err != nil {
				return fmt.Errorf("ab: %w", err)
			}
		}
	}
	// Modules named by their source are built (or found in the cache)
	// before the first round.
	for _, m := range []struct {
		p      *string
		kernel string
	}{{&a.aModule, a.aKernel}, {&a.bModule, a.bKernel}} {
		if *m.p == "" {
			continue
		}
		mods, err := resolveModules(cmd, a.vmf.k, m.kernel != "" || customKernel(cmd), []string{*m.p})
		if err != nil {
			return fmt.Errorf("ab: %w", err)
		}
		*m.p = mods[0]
	}
	if a.dir == "" {
		a.dir = filepath.Join("results", "ab-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return fmt.Errorf("ab: %w", err)
	}
	absDir, _ := filepath.Abs(a.dir)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// Each side names its own module: not the environment's.
	os.Unsetenv(envModule)
	res, err := ab.Run(cmd.Context(),
		a.side(cmd, exe, absDir, "A", a.aModule, a.aKernel, a.aModtree),
		a.side(cmd, exe, absDir, "B", a.bModule, a.bKernel, a.bModtree),
		ab.Options{Rounds: a.rounds, Dir: a.dir, Compare: results.CompareOptions{Force: a.force}, Log: cmd.ErrOrStderr(), Profile: a.profile})
	if res != nil && res.Comparison != nil {
		a.print(cmd.OutOrStdout(), res)
	}
	if err != nil {
		return err
	}
	j, jerr := ab.Judge(res.A, res.B, judge)
	if jerr != nil {
		if a.exitCode {
			return fmt.Errorf("ab: verdict: %w", jerr)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "\nno verdict: %v\n", jerr)
		return nil
	}
	fmt.Fprintf(cmd.OutOrStdout(), "\nverdict %s", j)
	if a.exitCode && j.Verdict != ab.Same {
		return exitStatus(j.Verdict.ExitCode())
	}
	return nil
}

// judgeOptions are the verdict's terms from the flags.
func (a *abFlags) judgeOptions() (ab.JudgeOptions, error) {
	name := a.metric
	if name == "" {
		name = defaultMetric(a.mode)
	}
	m, err := ab.ParseMetric(name)
	if err != nil {
		return ab.JudgeOptions{}, err
	}
	t, err := ab.ParseThreshold(a.threshold)
	if err != nil {
		return ab.JudgeOptions{}, err
	}
	if a.alpha <= 0 || a.alpha >= 0.5 {
		return ab.JudgeOptions{}, fmt.Errorf("--alpha %v: want a level between 0 and 0.5", a.alpha)
	}
	if m.Counter != "" {
		a.counters = true // the counters need --explain
	}
	if a.improvement {
		m = m.Reversed()
	}
	return ab.JudgeOptions{Metric: m, Threshold: t, Alpha: a.alpha}, nil
}

// roundArgs are a round's matrix flags, but its results file.
func (a *abFlags) roundArgs() []string {
	args := []string{"--quiet",
		"--transports", joinList(a.transports), "--sizes", joinList(a.sizes),
		"--mtus", joinList(a.mtus), "--gso", joinList(a.gso), "--crypto", joinList(a.crypto),
		"--repeat", strconv.Itoa(a.repeat), "--time", a.sampleTime.String(), "--warmup", a.warmup.String()}
	if a.counters || a.allCounters {
		args = append(args, "--explain")
	}
	if a.profile {
		args = append(args, "--profile")
	}
	if a.mode != "" {
		args = append(args, "--mode", a.mode)
	}
	return args
}

// side is one side of the A/B: its guest (exe's ab-worker, kept up unless
// --reboot; a pair each round with --vm-peer) with its module or kernel,
// and absDir shared for the results.
func (a *abFlags) side(cmd *cobra.Command, exe, absDir, name, module, kernel, modtree string) ab.Side {
	v := a.vmf
	v.cfg.Shares = append(append([]string(nil), a.vmf.cfg.Shares...), absDir)
	v.load = append(append([]string(nil), a.vmf.load...), "tls", "veth", "sch_netem", "udp_tunnel", "ip6_udp_tunnel", "aesni_intel?")
	if module != "" {
		v.cfg.ModuleFiles = []string{module}
	}
	if kernel != "" {
		v.cfg.Kernel, v.cfg.Modules = kernel, modtree
	}
	if a.vmPeer {
		return abVMPeerSide(cmd, v, name, a.roundArgs)
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
		err := g.Round(append([]string{"--out", out}, a.roundArgs()...))
		if a.reboot || err != nil {
			if cerr := closeGuest(); err == nil {
				err = cerr
			}
		}
		return err
	}}
}

// print writes B against A, the ratios' changes and the differential
// flamegraphs.
func (a *abFlags) print(w io.Writer, res *ab.Result) {
	fmt.Fprintf(w, "B against A, %d rounds each in the order %v:\n", a.rounds, res.Order)
	render.WriteComparison(w, res.Comparison, render.ComparisonView{Counters: counterView(a.counters, a.allCounters), Old: "A", New: "B"})
	render.WriteRatioChanges(w, res.A, res.B, 0.05)
	if len(res.Flames) > 0 {
		fmt.Fprintf(w, "\ndifferential flamegraphs (red: B spends more, blue: less):\n")
		for _, fl := range res.Flames {
			fmt.Fprintf(w, "  %s  (%d samples A, %d B)\n", fl.Diff, fl.SamplesA, fl.SamplesB)
		}
	}
	fmt.Fprintf(w, "\nresults: %s (every round; A.json and B.json merged)\n", a.dir)
}

func joinList(v []string) string { return strings.Join(matrix.SplitList(v), ",") }

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

// defaultMetric is the figure a verdict on cells of mode judges unless
// --metric says (matrix.ModeSpec.Metric): goodput where the mode names
// none.
func defaultMetric(mode string) string {
	if ms, err := matrix.ModeSpecOf(matrix.Mode(mode)); err == nil && ms.Metric != "" {
		return ms.Metric
	}
	return "goodput"
}

// defaultMetrics says which figure each mode's verdict judges by default,
// for --metric's help.
func defaultMetrics() string {
	out := []string{"goodput"}
	for _, m := range matrix.Modes() {
		if ms, _ := matrix.ModeSpecOf(m); ms.Metric != "" {
			out = append(out, fmt.Sprintf("%s in %s mode", ms.Metric, m))
		}
	}
	return strings.Join(out, ", ")
}
