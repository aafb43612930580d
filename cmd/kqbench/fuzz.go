//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/conformance"
	"kquic.dev/fuzz"
	"kquic.dev/kmod/vm"
)

type fuzzFlags struct {
	target, out, log, replay, inject string
	roles                            []string
	seed                             uint64
	inputs, batch                    int
	dur                              time.Duration
	initialShare                     float64
	inVM, noNarrow                   bool
}

func newFuzzCmd() *cobra.Command {
	var (
		ff  fuzzFlags
		vmf vmFlags
	)
	cmd := &cobra.Command{
		Use:   "fuzz",
		Short: "Fuzz a QUIC implementation's packet parser past the handshake, with kernel oracles",
		Long: `Send a QUIC implementation generated packets: after a real handshake, 1-RTT
packets under the connection's keys whose frames carry edge values and
byte-level mutations; before it, mangled Initial datagrams. Every input is
logged (--log) before it is sent. The oracles: the kernel log (BUG:,
WARNING:, KASAN:, ...), a fresh handshake after every batch, the module's
sockets and slab objects back to where they started at the end (and rmmod
quic in the guest), and, with --vm, a guest that dies or stops answering.

With --vm the fuzzer runs in the qemu guest (kernel QUIC with $KQUIC_MODULE;
--kernel/--modules for a KASAN build); after a finding the host replays the
last inputs in fresh guests to narrow them to a reproducer, which
'kqbench fuzz --vm --replay FILE' replays.`,
		Example: `  KQUIC_MODULE=/path/quic.ko kqbench fuzz --vm --time 10m
  kqbench fuzz --target quic-go --inputs 2000 --seed 1`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ff.inputs == 0 && ff.dur == 0 && ff.replay == "" {
				ff.dur = time.Minute
			}
			if ff.seed == 0 {
				ff.seed = uint64(time.Now().UnixNano())
			}
			stamp := time.Now().Format("20060102-150405")
			if ff.out == "" {
				ff.out = filepath.Join("results", "fuzz-"+stamp+".json")
			}
			if err := os.MkdirAll(filepath.Dir(ff.out), 0o755); err != nil {
				return fmt.Errorf("fuzz: --out: %w", err)
			}
			if ff.inVM {
				return ff.runVM(cmd, &vmf, strings.TrimSuffix(ff.out, ".json"))
			}
			return ff.run(cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&ff.target, "target", "kquic", "the implementation under test: "+strings.Join(conformance.TargetNames(), ", "))
	f.StringSliceVar(&ff.roles, "roles", []string{"server", "client"}, "the target's roles, a batch each in turn")
	f.Uint64Var(&ff.seed, "seed", 0, "the generator's seed (default: from the clock; the report names it)")
	f.IntVar(&ff.inputs, "inputs", 0, "stop after this many inputs")
	f.DurationVar(&ff.dur, "time", 0, "stop after this long (default 1m when --inputs is not given)")
	f.IntVar(&ff.batch, "batch", 50, "inputs between two liveness checks")
	f.Float64Var(&ff.initialShare, "initial-share", 0.2, "share of the inputs that are Initial datagrams before a handshake")
	f.StringVar(&ff.out, "out", "", "report file (default results/fuzz-TIME.json)")
	f.StringVar(&ff.log, "log", "", "input log (default beside the report)")
	f.StringVar(&ff.replay, "replay", "", "send the inputs of this log instead of generated ones")
	f.BoolVar(&ff.inVM, "vm", false, "fuzz in the qemu guest (kernel QUIC with $KQUIC_MODULE)")
	f.BoolVar(&ff.noNarrow, "no-narrow", false, "with --vm: do not replay a finding's inputs in fresh guests")
	f.StringVar(&ff.inject, "inject", "", "for tests of the oracles: kmsg@N writes a WARNING: line before input N, crash@N crashes the kernel")
	f.MarkHidden("inject")
	vmf.register(cmd)
	return cmd
}

// run fuzzes here (in the guest, or on a host with the target).
func (ff *fuzzFlags) run(cmd *cobra.Command) error {
	t, err := conformance.Open(ff.target)
	if err != nil {
		return fmt.Errorf("fuzz: %w (kernel QUIC: run it in the guest with KQUIC_MODULE=/path/quic.ko kqbench fuzz --vm)", err)
	}
	var roles []conformance.Role
	for _, r := range splitList(ff.roles) {
		if r != string(conformance.Server) && r != string(conformance.Client) {
			return fmt.Errorf("fuzz: --roles %q: give server, client or both", r)
		}
		roles = append(roles, conformance.Role(r))
	}
	o := fuzz.Options{Target: t, Roles: roles, Gen: fuzz.Generator{Seed: ff.seed, InitialShare: ff.initialShare},
		Inputs: ff.inputs, Time: ff.dur, Batch: ff.batch, Progress: cmd.ErrOrStderr()}
	if ff.replay != "" {
		if o.Replay, err = fuzz.ReadLog(ff.replay); err != nil {
			return err
		}
	}
	logPath := ff.log
	if logPath == "" {
		logPath = strings.TrimSuffix(ff.out, ".json") + "-inputs.jsonl"
	}
	if o.Log, err = fuzz.CreateLog(logPath); err != nil {
		return err
	}
	defer o.Log.Close()
	if k, err := fuzz.OpenKernelLog(); err == nil {
		defer k.Close()
		o.Kernel = k
	} else if vm.InGuest() {
		return err
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "fuzz: no kernel log oracle: %v\n", err)
	}
	if t.Name() == "kquic" {
		o.Leaks = &fuzz.ModuleLeaks{Unload: vm.InGuest()}
	}
	if o.Inject, err = injector(ff.inject); err != nil {
		return err
	}
	rep, err := fuzz.Run(cmd.Context(), o)
	if rep != nil {
		if t.Name() == "kquic" {
			rep.Module = moduleIdentity()
		}
		if serr := rep.Save(ff.out); serr != nil {
			return serr
		}
		rep.WriteSummary(cmd.OutOrStdout())
		fmt.Fprintf(cmd.OutOrStdout(), "report: %s\ninputs: %s\n", ff.out, logPath)
	}
	return err
}

// injector makes --inject's hook.
func injector(spec string) (func(int), error) {
	if spec == "" {
		return nil, nil
	}
	what, at, ok := strings.Cut(spec, "@")
	n, err := strconv.Atoi(at)
	if !ok || err != nil || (what != "kmsg" && what != "crash") {
		return nil, fmt.Errorf("fuzz: --inject %q: give kmsg@N or crash@N", spec)
	}
	return func(seq int) {
		if seq != n {
			return
		}
		if what == "kmsg" {
			os.WriteFile("/dev/kmsg", []byte("WARNING: kqbench fuzz: the oracle test's line\n"), 0)
			return
		}
		os.WriteFile("/proc/sys/kernel/sysrq", []byte("1"), 0)
		os.WriteFile("/proc/sysrq-trigger", []byte("c"), 0)
	}, nil
}

// runVM fuzzes in a guest and, after a finding, narrows its inputs in
// fresh guests. base is the report's path without .json: the log and the
// reproducer go beside it.
func (ff *fuzzFlags) runVM(cmd *cobra.Command, vmf *vmFlags, base string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(base)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("fuzz: %w", err)
	}
	out, log := filepath.Join(dir, "report.json"), filepath.Join(dir, "inputs.jsonl")
	guestArgs := func(extra ...string) []string {
		a := []string{exe, "fuzz", "--target", ff.target, "--roles", strings.Join(ff.roles, ","), "--batch", strconv.Itoa(ff.batch),
			"--initial-share", strconv.FormatFloat(ff.initialShare, 'g', -1, 64), "--seed", strconv.FormatUint(ff.seed, 10)}
		return append(a, extra...)
	}
	args := guestArgs("--log", log, "--out", out)
	if ff.inputs > 0 {
		args = append(args, "--inputs", strconv.Itoa(ff.inputs))
	}
	if ff.dur > 0 {
		args = append(args, "--time", ff.dur.String())
	}
	if ff.replay != "" {
		r, err := filepath.Abs(ff.replay)
		if err != nil {
			return err
		}
		args = append(args, "--replay", r)
	}
	if ff.inject != "" {
		args = append(args, "--inject", ff.inject)
	}
	vmf.cfg.Shares = append(vmf.cfg.Shares, dir)
	vmf.load = append(vmf.load, "udp_tunnel", "ip6_udp_tunnel")
	cfg, err := vmf.config(cmd, args)
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("timeout") {
		cfg.Timeout = ff.dur + 10*time.Minute + vm.BootMargin
	}
	cfg.Stdout, cfg.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	rep, err := fuzz.RunGuest(cmd.Context(), fuzz.GuestRun{Config: cfg, Args: args, Log: log, Out: out})
	if err != nil {
		return err
	}
	for i, f := range rep.Findings {
		if f.Oracle != "guest" && f.Oracle != "kernel-log" {
			continue
		}
		fdir := filepath.Join(dir, fmt.Sprintf("finding-%d", i+1))
		inputs, _ := fuzz.ReadLog(log)
		repro, found := inputs, &rep.Findings[i]
		if !ff.noNarrow && len(inputs) > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "fuzz: %s finding after input %d: replaying its inputs in fresh guests\n", f.Oracle, f.After)
			cfg.Stdout, cfg.Stderr = nil, nil
			t, nf, err := fuzz.Narrow(cmd.Context(), cfg, fdir, inputs, f.Oracle, func(in, l, o string) []string {
				return []string{exe, "fuzz", "--target", ff.target, "--roles", strings.Join(ff.roles, ","), "--replay", in, "--log", l, "--out", o}
			})
			if err != nil {
				return err
			}
			if nf != nil {
				repro, found = t, nf
				fmt.Fprintf(cmd.OutOrStdout(), "finding %d reproduces with the last %d inputs\n", i+1, len(t))
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "finding %d did not come back when its inputs were replayed in a fresh guest\n", i+1)
			}
		}
		if err := fuzz.WriteReproducer(fdir, repro, found); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "reproducer: %s (kqbench fuzz --vm --target %s --replay %s)\n", fdir, ff.target, filepath.Join(fdir, "inputs.jsonl"))
	}
	rep.WriteSummary(cmd.OutOrStdout())
	final := base + ".json"
	if err := rep.Save(final); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), "report:", final)
	return nil
}
