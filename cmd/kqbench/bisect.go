//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench/ab"
	"kquic.dev/bench/bisect"
	"kquic.dev/bench/results"
	"kquic.dev/kmod/modbuild"
)

// bisectFlags are kqbench bisect's flags: a cell, the verdict's terms and
// the rounds, as kqbench ab's.
type bisectFlags struct {
	a                    abFlags
	src, good, bad       string
	transport, size, mtu string
	gso, crypto          string
	maxRounds            int
	makeVars             []string
}

func newBisectCmd() *cobra.Command {
	b := &bisectFlags{}
	cmd := &cobra.Command{
		Use:   "bisect --src DIR --good REF --bad REF [--transport T --size S ...] [--metric M --threshold P]",
		Short: "Find the commit of a module's source that made a figure worse: each step built and A/B'd against the good end in guests",
		Long: `Bisect the first-parent commits of a module's source tree between a good
and a bad end for the commit that made a figure worse.

Each step builds the module of a commit as kqbench module build does (--src
is the module's directory or the top of an lxin/quic tree, in a git
checkout; builds are cached by source tree, so a commit that leaves the
module alone costs nothing), then runs the rounds of kqbench ab - ABBA, each
side in a guest kept up - with the good end's module as side A, over one
cell (--transport, --size, --mtu, --gso, --crypto, --mode), and judges the
commit by ab's verdict on --metric: worse than the good end by more than
--threshold is bad, significantly within it is good, and undecided takes
--rounds more rounds a side until --max-rounds, then is skipped (git bisect
skip), as is a commit whose build fails. A commit whose module has the code
of one already judged is judged alike without a measurement. The bad end is
measured first: when it is not worse, nothing moved and the run says so.

It ends with the first bad commit (or the commits skips leave it among) and
each step's figures and p values, and writes --dir/bisect.log, a git bisect
log (git bisect replay reads it) with the evidence in its comments, and
--dir/bisect.json, beside every step's rounds.

Exit status: 0 a first bad commit found, 1 nothing moved (the bad end is
significantly not worse), 125 no single commit found, the bad end
undecided, or the run failed.

--improvement turns the question round: which commit made the figure
better (the good end is the older, slower figure; bad means better by more
than --threshold).`,
		Example: `  kqbench bisect --src ~/src/quic --good v1 --bad main --transport kquic --size 4K --metric goodput --threshold 5%
  kqbench bisect --src ~/src/quic --good 5c78285 --bad 03a9c7c --size 64K --gso off --rounds 4 --max-rounds 12`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return b.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&b.src, "src", "", "the module's source in a git checkout: its directory, or the top of an lxin/quic tree")
	f.StringVar(&b.good, "good", "", "the good end: a commit whose figure is the reference")
	f.StringVar(&b.bad, "bad", "", "the bad end: a later commit whose figure is worse")
	f.StringArrayVar(&b.makeVars, "make-var", nil, "extra make variable NAME=VALUE for the builds (repeatable), as kqbench module build's")
	f.StringVar(&b.transport, "transport", "kquic", "the cell's transport")
	f.StringVar(&b.size, "size", "16K", "the cell's message size")
	f.StringVar(&b.mtu, "mtu", "1500", "the cell's MTU")
	f.StringVar(&b.gso, "gso", "on", "the cell's GSO: on or off")
	f.StringVar(&b.crypto, "crypto", "on", "the cell's encryption: on or off")
	f.StringVar(&b.a.mode, "mode", "", "what the cell measures, as kqbench matrix --mode (default bulk)")
	f.StringVar(&b.a.metric, "metric", "", "the figure: "+ab.MetricNames()+" (default: "+defaultMetrics()+")")
	f.StringVar(&b.a.threshold, "threshold", "5%", "how much worse than the good end a commit may be and still be good, in percent")
	f.Float64Var(&b.a.alpha, "alpha", 0.05, "significance level of the verdict's tests")
	f.BoolVar(&b.a.improvement, "improvement", false, "find the commit that made the figure better instead: the bad end is better than the good end by more than --threshold (git bisect's old and new)")
	f.IntVar(&b.a.rounds, "rounds", 4, "rounds per side of a step's A/B, and of each batch more for an undecided step")
	f.IntVar(&b.maxRounds, "max-rounds", 12, "rounds per side after which an undecided step is skipped")
	f.IntVar(&b.a.repeat, "repeat", 1, "samples of the cell in each round")
	f.DurationVar(&b.a.sampleTime, "time", 2*time.Second, "length of a sample")
	f.DurationVar(&b.a.warmup, "warmup", 500*time.Millisecond, "warm-up before a sample")
	f.StringVar(&b.a.dir, "dir", "", "directory for every step's rounds, bisect.log and bisect.json (default results/bisect-<time>)")
	f.BoolVar(&b.a.force, "force", false, "compare even if the sides' environments differ")
	b.a.vmf.register(cmd)
	f.MarkHidden("module") // each side loads its step's module
	for _, name := range []string{"src", "good", "bad"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

// run bisects, prints the steps and the answer, and exits as the help
// says.
func (b *bisectFlags) run(cmd *cobra.Command) error {
	a := &b.a
	a.transports, a.sizes, a.mtus = []string{b.transport}, []string{b.size}, []string{b.mtu}
	a.gso, a.crypto = []string{b.gso}, []string{b.crypto}
	judge, err := a.judgeOptions()
	if err != nil {
		return fmt.Errorf("bisect: %w", err)
	}
	if customKernel(cmd) {
		return errors.New("bisect: the steps are built for the Debian guest kernel; --kernel and $" + envKernel + " name another")
	}
	if a.dir == "" {
		a.dir = filepath.Join("results", "bisect-"+time.Now().Format("20060102-150405"))
	}
	absDir, err := filepath.Abs(a.dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(absDir, 0o755); err != nil {
		return fmt.Errorf("bisect: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	os.Unsetenv(envModule) // each side names its own module
	// The good end's guest waits, idle, while the next step builds.
	if !cmd.Flags().Changed("idle-limit") {
		a.vmf.cfg.IdleLimit = -1
	}
	ko := a.vmf.k.opts
	ko.Log = cmd.ErrOrStderr()
	res, err := bisect.Run(cmd.Context(), bisect.Options{
		Src: b.src, Good: b.good, Bad: b.bad,
		Build: modbuild.Options{Kernel: ko, MakeVars: b.makeVars, Log: cmd.ErrOrStderr()},
		Side: func(name, module string) ab.Side {
			return a.side(cmd, exe, absDir, name, module, "", "")
		},
		Judge: judge, Rounds: a.rounds, MaxRounds: b.maxRounds,
		Compare: resultsCompare(a.force), Dir: absDir, Log: cmd.ErrOrStderr(),
	})
	if res != nil {
		writeBisect(cmd, res, absDir)
	}
	if err != nil {
		return err
	}
	switch {
	case res.FirstBad != "":
		return nil
	case res.NothingMoved:
		return exitStatus(1)
	}
	return exitStatus(125)
}

// writeBisect prints the steps, the answer and where the log is.
func writeBisect(cmd *cobra.Command, res *bisect.Result, dir string) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "\n%s", res.Log)
	switch {
	case res.FirstBad != "":
		fmt.Fprintf(w, "\nfirst bad commit: %s\n", res.FirstBad)
	case res.NothingMoved:
		fmt.Fprintf(w, "\nnothing moved beyond the threshold between %.12s and %.12s\n", res.Good, res.Bad)
	case res.BadEndUndecided:
		fmt.Fprintf(w, "\nnothing to bisect: the bad end %.12s could not be told from the good end %.12s (%s)\n", res.Bad, res.Good, res.BadEnd.Why)
	case len(res.Candidates) > 0:
		fmt.Fprintf(w, "\nthe first bad commit is one of %d (the others skipped): %v\n", len(res.Candidates), res.Candidates)
	}
	fmt.Fprintf(w, "log: %s (git bisect replay reads it), every step's figures: %s\n",
		filepath.Join(dir, "bisect.log"), filepath.Join(dir, "bisect.json"))
}

func resultsCompare(force bool) results.CompareOptions {
	return results.CompareOptions{Force: force}
}
