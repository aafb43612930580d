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

	"kquic.dev/bench/matrix"
	"kquic.dev/conformance"
	"kquic.dev/fuzz"
	"kquic.dev/internal/quicsock"
	"kquic.dev/kmod"
	"kquic.dev/kmod/kcov"
	"kquic.dev/kmod/vm"
)

type fuzzFlags struct {
	target, out, log, replay, inject string
	kcovMode, kcovModule             string
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
--kernel/--modules for a KASAN or KCOV build); after a finding the host
replays the last inputs in fresh guests to narrow them to a reproducer
(finding-N/: finding.json, inputs.jsonl, kernel.log), which
'kqbench fuzz --vm --replay FILE' replays and the fuzz package's
TestReproducers replays as a Go test.

With a KCOV kernel (scripts/kcov-kernel builds one, and quic.ko for it) the
guest traces the module's coverage from the fuzzer's threads (--kcov auto:
whenever the kernel has KCOV and the target is kquic), and the host maps it
to the module's functions and lines with the module file; the report lists
them. KCOV sees task context only: the module's code run from the target's
system calls, the socket backlog included, not its softirq receive path.`,
		Example: `  KQUIC_MODULE=/path/quic.ko kqbench fuzz --vm --time 10m
  kqbench fuzz --vm --kernel /tmp/kcov/out/vmlinuz --modules /tmp/kcov/out/lib/modules/7.3.4-kqkcov \
      --module /tmp/kcov/out/quic.ko --time 10m
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
	f.StringVar(&ff.kcovMode, "kcov", "auto", "collect the module's KCOV coverage: auto (where the kernel has KCOV and the target is kquic), on, off")
	f.StringVar(&ff.kcovModule, "kcov-module", "", "without --vm: the module file to map the coverage with (with --vm the host maps it with --module)")
	f.StringVar(&ff.inject, "inject", "", "for tests of the oracles: kmsg@N writes a WARNING: line before input N, crash@N crashes the kernel (a mark logged with input N, done again when it is replayed)")
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
	for _, r := range matrix.SplitList(ff.roles) {
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
	if o.Mark, o.MarkAt, err = parseInject(ff.inject); err != nil {
		return err
	}
	tracer, err := ff.startKCOV(t.Name())
	if err != nil {
		return err
	}
	var layout *kcov.Layout
	if tracer != nil {
		o.Cover = tracer
		// Read while the module is loaded: the leak oracle unloads it.
		if layout, err = kcov.ModuleLayout("quic"); err != nil {
			return err
		}
	}
	rep, err := fuzz.Run(cmd.Context(), o)
	if rep != nil {
		if t.Name() == "kquic" {
			rep.Module = moduleIdentity()
		}
		if tracer != nil {
			rep.KCOV = tracer.Trace(layout)
			if ff.kcovModule != "" {
				var serr error
				if rep.Coverage, serr = kcov.Symbolize(ff.kcovModule, rep.KCOV); serr != nil {
					return serr
				}
			}
		}
		if serr := rep.Save(ff.out); serr != nil {
			return serr
		}
		rep.WriteSummary(cmd.OutOrStdout())
		fmt.Fprintf(cmd.OutOrStdout(), "report: %s\ninputs: %s\n", ff.out, logPath)
	}
	return err
}

// parseInject reads --inject: kmsg@N or crash@N.
func parseInject(spec string) (string, int, error) {
	if spec == "" {
		return "", 0, nil
	}
	what, at, ok := strings.Cut(spec, "@")
	n, err := strconv.Atoi(at)
	if !ok || err != nil || (what != "kmsg" && what != "crash") {
		return "", 0, fmt.Errorf("fuzz: --inject %q: give kmsg@N or crash@N", spec)
	}
	return what, n, nil
}

// startKCOV starts tracing the module's coverage as --kcov says: nil where
// it is off, or auto and the kernel has no KCOV or the target is not
// kernel QUIC.
func (ff *fuzzFlags) startKCOV(target string) (*kcov.Tracer, error) {
	switch ff.kcovMode {
	case "off":
		return nil, nil
	case "auto":
		if target != "kquic" || kcov.Available() != nil {
			return nil, nil
		}
	case "on":
		if target != "kquic" {
			return nil, fmt.Errorf("fuzz: --kcov on: the coverage is kernel QUIC's module's; the target is %s", target)
		}
	default:
		return nil, fmt.Errorf("fuzz: --kcov %q: give auto, on or off", ff.kcovMode)
	}
	tr, err := kcov.Start(0, 0)
	if err != nil {
		return nil, err
	}
	// Every socket call of kernel QUIC, on a traced thread.
	quicsock.Around = tr.Run
	return tr, nil
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
	roles := strings.Join(ff.roles, ",")
	args := []string{exe, "fuzz", "--target", ff.target, "--roles", roles, "--batch", strconv.Itoa(ff.batch),
		"--initial-share", strconv.FormatFloat(ff.initialShare, 'g', -1, 64), "--seed", strconv.FormatUint(ff.seed, 10),
		"--kcov", ff.kcovMode}
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
	var roleList []conformance.Role
	for _, r := range matrix.SplitList(ff.roles) {
		roleList = append(roleList, conformance.Role(r))
	}
	rep, err := fuzz.RunVM(cmd.Context(), fuzz.VMRun{
		Config: cfg, Dir: dir, Command: args, Narrow: !ff.noNarrow, Progress: cmd.ErrOrStderr(),
		ReplayCommand: func(in, l, o string) []string {
			return []string{exe, "fuzz", "--target", ff.target, "--roles", roles, "--kcov", "off", "--replay", in, "--log", l, "--out", o}
		},
		Repro:      fuzz.Reproducer{Target: ff.target, Roles: roleList, Seed: ff.seed},
		ModuleFile: quicModuleFile(cfg.ModuleFiles),
	})
	if err != nil {
		return err
	}
	for i, f := range rep.Findings {
		if f.Reproducer != "" {
			fmt.Fprintf(cmd.OutOrStdout(), "finding %d: reproducer %s (kqbench fuzz --vm --target %s --replay %s; or copy it under fuzz/testdata/repro for TestReproducers)\n",
				i+1, f.Reproducer, ff.target, filepath.Join(f.Reproducer, "inputs.jsonl"))
		}
	}
	rep.WriteSummary(cmd.OutOrStdout())
	final := base + ".json"
	if err := rep.Save(final); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), "report:", final)
	return nil
}

// quicModuleFile is the quic module among the module files a guest loads.
func quicModuleFile(files []string) string {
	for _, f := range files {
		if kmod.ModuleName(f) == "quic" {
			return f
		}
	}
	return ""
}
