//go:build linux

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench/matrix"
	"kquic.dev/kmod/debkernel"
	"kquic.dev/kmod/vm"
)

// Environment variables that configure `kqbench vm` when flags are not given
// (go test -exec passes no flags of its own).
const (
	envKernel  = "KQUIC_KERNEL"  // kernel image
	envModules = "KQUIC_MODULES" // its module tree
	envModule  = "KQUIC_MODULE"  // an out-of-tree module to load (quic.ko)
)

// vmFlags are the guest's settings, shared by `vm` and `matrix --vm`.
type vmFlags struct {
	cfg     vm.Config
	k       kernelFlags
	load    []string
	verbose bool
	// stdin forwards this process's standard input to the command.
	stdin bool
	// pair, for `vm` only, boots a second guest joined by a link.
	pair *pairFlags
}

func (v *vmFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&v.cfg.Kernel, "kernel", "", "kernel image (bzImage) to boot")
	f.StringVar(&v.cfg.Modules, "modules", "", "module tree of that kernel (lib/modules/<release>, with modules.dep)")
	f.StringSliceVar(&v.load, "load", nil, "modules of the tree to load, with dependencies (tls,sch_netem,...; a trailing ? loads one only where the tree has it)")
	f.StringSliceVar(&v.cfg.ModuleFiles, "module", nil, "out-of-tree module file to load (quic.ko), or src:DIR[@REF] to build one from its source (kqbench module build); also $"+envModule)
	f.StringSliceVar(&v.cfg.Shares, "share", nil, "host directory the guest may write (same path in the guest)")
	f.IntVar(&v.cfg.Memory, "memory", vm.DefaultMemory, "guest memory in MiB")
	f.IntVar(&v.cfg.CPUs, "cpus", vm.DefaultCPUs, "guest vCPUs")
	f.DurationVar(&v.cfg.Timeout, "timeout", vm.DefaultTimeout, "limit for boot and command together")
	f.DurationVar(&v.cfg.IdleLimit, "idle-limit", vm.DefaultIdleLimit, "end the run, with the guest's stacks and kernel log, when the command shows no output and qemu idles this long (negative: never)")
	f.StringVar(&v.cfg.Accel, "accel", "auto", "qemu accelerator: kvm, tcg (one host thread), tcg-multi (parallel vCPUs: faster, but guest kernels patching their code may crash) or auto")
	f.StringVar(&v.cfg.Init, "init", "", "init binary that calls vm.GuestMain, static or dynamic (default: this kqbench)")
	f.BoolVarP(&v.verbose, "verbose", "v", false, "show the kernel console and timings")
	v.k.register(cmd)
}

// config is the guest the flags describe, the kernel fetched if needed;
// args is the command it will run (for the timeout under go test -exec).
func (v *vmFlags) config(cmd *cobra.Command, args []string) (vm.Config, error) {
	cfg := v.cfg
	for _, m := range matrix.SplitList(v.load) {
		cfg.Load = append(cfg.Load, m)
	}
	if cfg.Kernel == "" {
		cfg.Kernel, cfg.Modules = os.Getenv(envKernel), os.Getenv(envModules)
	}
	// A module named by its source (src:DIR[@REF]) is built first; the
	// guest's own processes find $KQUIC_MODULE naming the file.
	mods, err := resolveModules(cmd, v.k, customKernel(cmd), cfg.ModuleFiles)
	if err != nil {
		return cfg, err
	}
	cfg.ModuleFiles = mods
	if m := os.Getenv(envModule); m != "" {
		mods, err := resolveModules(cmd, v.k, customKernel(cmd), []string{m})
		if err != nil {
			return cfg, fmt.Errorf("$%s: %w", envModule, err)
		}
		os.Setenv(envModule, mods[0])
		cfg.ModuleFiles = append(cfg.ModuleFiles, mods[0])
	}
	if cfg.Kernel == "" {
		v.k.opts.Log = cmd.ErrOrStderr()
		kern, err := debkernel.Ensure(cmd.Context(), v.k.opts)
		if err != nil {
			return cfg, err
		}
		if kern.Note != "" {
			fmt.Fprintln(cmd.ErrOrStderr(), "kqbench vm:", kern.Note)
		}
		cfg.Kernel, cfg.Modules = kern.Image, kern.Modules
	}
	// Under go test -exec, the test binary's own timeout (plus the boot)
	// is the limit, unless --timeout says otherwise.
	if f := cmd.Flags().Lookup("timeout"); f != nil && !f.Changed {
		if d, ok := vm.TimeoutFor(args); ok {
			cfg.Timeout = d
		}
	}
	cfg.Stdout, cfg.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	if v.verbose {
		cfg.Console = cmd.ErrOrStderr()
	}
	if v.stdin {
		cfg.Stdin = cmd.InOrStdin()
	}
	return cfg, nil
}

// run boots the guest and runs args in it.
func (v *vmFlags) run(cmd *cobra.Command, args []string) error {
	_, err := v.runResult(cmd, args)
	return err
}

// runResult is run, with how the guest ran (nil if it did not start).
func (v *vmFlags) runResult(cmd *cobra.Command, args []string) (*vm.Result, error) {
	cfg, err := v.config(cmd, args)
	if err != nil {
		return nil, err
	}
	if v.pair != nil && v.pair.peerCmd != "" {
		return nil, v.pair.runPair(cmd, cfg, args)
	}
	res, err := vm.Run(cmd.Context(), cfg, args)
	if v.verbose && res != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "kqbench vm: %s, boot %v, run %v, exit %d\n", res.Accel, res.Boot.Round(time.Millisecond), res.Run.Round(time.Millisecond), res.ExitCode)
	}
	return res, err
}

func newVMCmd() *cobra.Command {
	var v vmFlags
	cmd := &cobra.Command{
		Use:   "vm [flags] -- COMMAND [ARGS...]",
		Short: "Run a command in a VM booted with the guest kernel (usable as go test -exec)",
		Long: `Run a command in a qemu guest that sees the host's files read-only (and the
--share directories writable), with the requested kernel modules loaded.
Its output streams back and its exit status becomes kqbench's.

The kernel is --kernel/--modules, else $` + envKernel + `/$` + envModules + `, else the
pinned Debian kernel (fetched into the cache on first use). $` + envModule + ` names
an out-of-tree module (quic.ko) to load as well. --module and $` + envModule + ` also
take a source, src:DIR or src:DIR@REF (a commit of the git checkout DIR is
in), built first for the guest kernel as kqbench module build does (cached).

As a test runner:  go test -exec 'kqbench vm --load tls,sch_netem --' ./...

With --peer-cmd, a second guest (B) boots beside this one (A), each its own
kernel, joined by a virtio-net link: A is 10.77.0.1/24 and B 10.77.0.2/24 on
eth0 (hosts kqvm-a and kqvm-b), and each command finds $KQVM_DEV,
$KQVM_ADDR, $KQVM_PEER and $KQVM_NAME (a or b) in its environment. Both
commands start once both guests are up; when A's ends, B's gets SIGTERM
(and --peer-grace) and the pair powers off; if B's guest fails (a panic),
A's is stopped. B's output comes on standard error, each line after "[B] ";
then each guest's kernel, boot ID, out-of-tree modules, device, queues and
offloads, and how it ended. kqbench exits with A's status.
B takes A's kernel, modules and --module unless --b-kernel/--b-modules and
--b-module say otherwise: old client, new server is

  kqbench vm --module old/quic.ko --b-module new/quic.ko \
    --peer-cmd 'iperf3 -s -1' -- iperf3 -c kqvm-b

The tap link (the default as root) carries virtio-net headers, so the guests
have TSO, GSO, GRO and checksum offload and --link-queues; the socket link
needs no privilege but has no TSO, GSO or checksum offload and one queue.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return v.run(cmd, args) },
	}
	v.register(cmd)
	v.pair = &pairFlags{}
	v.pair.register(cmd)
	cmd.Flags().BoolVar(&v.stdin, "stdin", false, "forward standard input to the command (default: it reads /dev/null)")
	cmd.Flags().SetInterspersed(false)
	return cmd
}
