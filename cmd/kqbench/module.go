//go:build linux

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/kmod/debkernel"
	"kquic.dev/kmod/modbuild"
)

func newModuleCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "module", Short: "Build out-of-tree kernel modules for the guest kernel"}
	var (
		o modbuild.Options
		k kernelFlags
	)
	build := &cobra.Command{
		Use:   "build --src DIR [--ref REF] [--kernel-build DIR] [--make-var NAME=VALUE ...]",
		Short: "Build the module(s) of a source tree for the guest kernel and print the .ko paths",
		Long: `Build the out-of-tree kernel module(s) of a source tree with kbuild
(make -C <kernel build tree> M=<module dir> modules) and print the path of each
.ko, one a line.

--src is the module's directory: the one whose Kbuild (or Makefile) declares
obj-m (or obj-$(CONFIG_...)). --ref builds a commit of the git checkout --src
lies in instead of its files (the checkout is not touched).

For the Debian guest kernel (the release 'kqbench kernel fetch' pins) the
build runs in a build root made once in the cache directory with debootstrap:
the release's suite, make and the kernel's linux-headers package, which brings
the compiler Debian built the kernel with (minutes and about 510 MB, once; it
needs root, debootstrap and the Debian mirror). --kernel-build builds against
a kernel build tree of yours with the host's compiler instead.

Some trees need make variables: pass each with --make-var NAME=VALUE, e.g. a
CONFIG_...=m that selects the module, or the top of the tree for its include
directory. A value naming a directory that contains --src is copied with it
and points at the copy; the source is always built in a copy, never in place.

Builds are cached by the source's content (a ref's git tree), the kernel and
the make variables, and kept in <cache>/modules/<code>, named by the modules'
code hash (kmod.CodeHash), so two builds of the same code are one. The log of
each build is kept there (build.log); a failed build's error names its log.`,
		Example: `  kqbench module build --src ~/src/mymod
  kqbench module build --src ~/src/tree/drivers/foo --make-var CONFIG_FOO=m --make-var TOPDIR=$HOME/src/tree
  kqbench module build --src ~/src/mymod --ref v1.2
  kqbench module build --src ~/src/mymod --kernel-build ~/src/linux/build`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Kernel = k.opts
			o.Log = cmd.ErrOrStderr()
			o.Kernel.Log = o.Log
			start := time.Now()
			r, err := modbuild.Build(cmd.Context(), o)
			if err != nil {
				return err
			}
			how := fmt.Sprintf("built in %s", time.Since(start).Round(100*time.Millisecond))
			if r.Cached {
				how = "cached"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s for %s, code %s, log %s\n", how, r.Kernel, r.Code, r.Log())
			for _, m := range r.Modules {
				fmt.Fprintln(cmd.OutOrStdout(), m)
			}
			return nil
		},
	}
	f := build.Flags()
	f.StringVar(&o.Src, "src", "", "the module's source directory (with the Kbuild or Makefile that declares obj-m)")
	f.StringVar(&o.Ref, "ref", "", "build this commit of the git checkout --src is in, instead of its files")
	f.StringVar(&o.KernelBuild, "kernel-build", "", "build against this kernel build tree with the host's compiler, instead of for the Debian guest kernel")
	f.StringArrayVar(&o.MakeVars, "make-var", nil, "extra make variable NAME=VALUE (repeatable)")
	f.IntVar(&o.Jobs, "jobs", 0, "make -j (default: the number of CPUs)")
	f.BoolVar(&o.Rebuild, "rebuild", false, "build even when the cache has this build")
	build.MarkFlagRequired("src")
	k.register(build)
	build.Flags().Lookup("debian-release").Usage = "Debian kernel release to build for when --kernel-build is not given"
	build.Flags().Lookup("exact").Usage = "fail instead of building for the suite's current kernel when the release is gone"
	cmd.AddCommand(build)
	var pk kernelFlags
	path := &cobra.Command{
		Use:   "path MODULE",
		Short: "Print the module file a .ko path or src:DIR[@REF] names, building it first if need be",
		Long: `Print the module file MODULE names: a .ko file as it is (it must exist),
or for src:DIR or src:DIR@REF the first module of its build for the guest
kernel (kqbench module build's, cached; quic.ko of an lxin/quic tree),
built first where the cache does not have it. make test resolves
KQUIC_MODULE=src:... with it.`,
		Example: `  kqbench module path src:~/src/quic@03a9c7c
  KQUIC_MODULE=$(kqbench module path src:$HOME/src/quic) go test ./kquic/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mods, err := resolveModules(cmd, pk, false, args)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), mods[0])
			return nil
		},
	}
	pk.register(path)
	cmd.AddCommand(path)
	return cmd
}

// resolveModules turns module arguments into module files: a
// src:DIR[@REF] is built for the Debian guest kernel k selects (or found in
// the cache), its progress on standard error; a file is kept as it is, and
// must exist.
// customKernel says the guest boots a kernel of the user's, for which
// kqbench cannot build: a source is then an error.
func resolveModules(cmd *cobra.Command, k kernelFlags, customKernel bool, args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if !modbuild.IsSource(a) {
			if _, err := os.Stat(a); err != nil {
				return nil, fmt.Errorf("module %w (a .ko file, or src:DIR[@REF] to build one)", err)
			}
			out = append(out, a)
			continue
		}
		if customKernel {
			return nil, fmt.Errorf("module %s: a source is built for the Debian guest kernel, and this guest boots a kernel of its own: build it with `kqbench module build --src DIR --kernel-build TREE` and give the .ko", a)
		}
		o := k.opts
		o.Log = cmd.ErrOrStderr()
		p, err := modbuild.ResolveModule(cmd.Context(), a, modbuild.Options{Kernel: o, Log: cmd.ErrOrStderr()})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "module %s: %s\n", a, p)
		out = append(out, p)
	}
	return out, nil
}

// kernelFlagsOf reads the Debian kernel's flags (kernelFlags.register) of
// cmd, for code that has the command but not its flags' struct.
func kernelFlagsOf(cmd *cobra.Command) kernelFlags {
	var k kernelFlags
	f := cmd.Flags()
	k.opts.Release, _ = f.GetString("debian-release")
	k.opts.Suite, _ = f.GetString("debian-suite")
	k.opts.Exact, _ = f.GetBool("exact")
	k.opts.CacheDir, _ = f.GetString("cache")
	return k
}

// customKernel says the guest boots a kernel of the user's (--kernel or
// $KQUIC_KERNEL), not the Debian one in the cache (which a test names
// with --kernel too).
func customKernel(cmd *cobra.Command) bool {
	kernel, _ := cmd.Flags().GetString("kernel")
	if kernel == "" {
		kernel = os.Getenv(envKernel)
	}
	if kernel == "" {
		return false
	}
	k, err := debkernel.Cached(kernelFlagsOf(cmd).opts)
	if err != nil {
		return true
	}
	a, errA := os.Stat(kernel)
	b, errB := os.Stat(k.Image)
	return errA != nil || errB != nil || !os.SameFile(a, b)
}
