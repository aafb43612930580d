//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kquic.dev/bench/matrix"
	"kquic.dev/interop"
	"kquic.dev/kmod/knownbugs"
)

func firstOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// interopAB runs the command in two guests, A with --module (or
// $KQUIC_MODULE) and B with bModule, each into its own results file, and
// prints B's matrix and the cells that changed.
func interopAB(cmd *cobra.Command, vmf *vmFlags, out, bModule string) error {
	modA := firstOf(vmf.cfg.ModuleFiles)
	if modA == "" {
		modA = os.Getenv(envModule)
	}
	if modA == "" {
		return fmt.Errorf("interop: --b-module: give A's module with --module or $%s", envModule)
	}
	// Modules named by their source (src:DIR[@REF]) are built first, so
	// each guest gets, and names, a file.
	mods, err := resolveModules(cmd, vmf.k, customKernel(cmd), []string{modA, bModule})
	if err != nil {
		return fmt.Errorf("interop: %w", err)
	}
	modA, bModule = mods[0], mods[1]
	for _, m := range []string{modA, bModule} {
		if _, err := os.Stat(m); err != nil {
			return fmt.Errorf("interop: %w", err)
		}
	}
	os.Unsetenv(envModule) // each side names its own
	base := strings.TrimSuffix(out, ".json")
	docs := map[string]*interop.Document{}
	for _, side := range []struct{ name, module string }{{"A", modA}, {"B", bModule}} {
		sideOut := base + "-" + side.name + ".json"
		v := *vmf
		v.cfg.ModuleFiles = []string{side.module}
		args, err := guestArgs(cmd, &v, sideOut)
		if err != nil {
			return fmt.Errorf("interop: %w", err)
		}
		args = append(dropFlags(args, "--module", "--b-module", "--out"), "--module", side.module, "--out", sideOut)
		v.load = append(v.load, "udp_tunnel", "ip6_udp_tunnel")
		fmt.Fprintf(cmd.ErrOrStderr(), "interop: side %s, module %s (%s)\n", side.name, side.module, strings.Join(knownbugs.FileBuilds(side.module), ", "))
		// A side's own matrix goes with its progress; B's and the changes
		// come below.
		stdout := cmd.OutOrStdout()
		cmd.SetOut(cmd.ErrOrStderr())
		err = v.run(cmd, args)
		cmd.SetOut(stdout)
		if err != nil {
			return fmt.Errorf("interop: side %s (%s): %w", side.name, side.module, err)
		}
		d, err := interop.LoadDocument(sideOut)
		if err != nil {
			return err
		}
		docs[side.name] = d
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "B (%s):\n", docs["B"].Module)
	interop.WriteMatrix(w, docs["B"].Results)
	fmt.Fprintln(w)
	interop.WriteDiff(w, docs["A"].Module, docs["B"].Module, docs["A"].Results, docs["B"].Results)
	fmt.Fprintf(w, "results: %s-A.json, %s-B.json\n", base, base)
	return nil
}

// interopRejudge re-applies the known-bug verdicts to a results file.
func interopRejudge(cmd *cobra.Command, path string) error {
	d, err := interop.LoadDocument(path)
	if err != nil {
		return err
	}
	interop.Rejudge(d.Results, func(name string) bool { return name == "kquic" || name == "kquic-c" })
	if err := d.Save(path); err != nil {
		return err
	}
	interop.WriteMatrix(cmd.OutOrStdout(), d.Results)
	fmt.Fprintln(cmd.OutOrStdout(), "results:", path)
	return nil
}

// dropFlags removes the named flags and their values from args (after
// args[0], the program).
func dropFlags(args []string, names ...string) []string {
	out := []string{args[0]}
	for i := 1; i < len(args); i++ {
		a := args[i]
		drop := false
		for _, n := range names {
			if a == n {
				drop = true
				i++ // its value
			} else if strings.HasPrefix(a, n+"=") {
				drop = true
			}
		}
		if !drop {
			out = append(out, a)
		}
	}
	return out
}

// interopHelp is interop --help's text.
var interopHelp = `Run the quic-interop-runner's test cases (handshake, transfer, retry,
resumption, zerortt, http3, keyupdate, chacha20, v2, the loss, corruption and
rebinding cases, ...) between QUIC implementations, each pair in both roles,
through a relay on loopback that impairs the traffic as a case asks and keeps
every datagram. Each case is judged from the decrypted trace and the files'
contents, and prints as a matrix: rows servers, columns clients.

Implementations: ` + strings.Join(interop.ImplNames(), ", ") + `. kquic (this project's
bindings) and kquic-c (the module's own tests/http3_test, from
$` + interop.HTTP3TestEnv + `) need the QUIC module: --vm runs the command in the qemu
guest with $KQUIC_MODULE (or --module). Where kernel QUIC is in the run, only
the pairs with it at one end at least run (--all-pairs: every pair).

The results go to --out as JSON; a failed case's evidence stays beside it:
the trace (pcapng) with its key log, both ends' output, and with kernel
QUIC the kernel log during the case (the module's lines also in the
results) and the module's code hash. A failure that shows a known module
bug (kmod/knownbugs) on a build known to have it is reported as that bug
(known-bug), neither pass nor fail.

--b-module runs the same cases on a second module build in a second guest
and prints which cells changed from A (--module or $KQUIC_MODULE) to B.`

// interopFlags are kqbench interop's flags.
type interopFlags struct {
	clients, servers, cases []string
	out                     string
	scale                   float64
	timeout                 time.Duration
	repeat                  int
	inVM, keep, allPairs    bool
	bModule, rejudge        string
	vmf                     vmFlags
}

func newInteropCmd() *cobra.Command {
	f := &interopFlags{}
	cmd := &cobra.Command{
		Use:   "interop",
		Short: "Run the QUIC interop runner's test cases between implementations, kernel QUIC included",
		Long:  interopHelp,
		Example: `  KQUIC_MODULE=/path/quic.ko KQUIC_HTTP3_TEST=/path/libquic/tests/http3_test kqbench interop --vm
  kqbench interop --vm --module old/quic.ko --b-module new/quic.ko --cases handshake,transfer,zerortt
  kqbench interop --clients quic-go,ngtcp2 --servers quic-go,ngtcp2 --cases handshake,retry,zerortt`,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	fs := cmd.Flags()
	fs.StringSliceVar(&f.clients, "clients", nil, "client implementations (default: every one that can run here)")
	fs.StringSliceVar(&f.servers, "servers", nil, "server implementations (default: every one that can run here)")
	fs.StringSliceVar(&f.cases, "cases", nil, "cases to run (default all)")
	fs.StringVar(&f.out, "out", "", "results file (default results/interop-TIME.json; evidence in the directory of the same name)")
	fs.Float64Var(&f.scale, "scale", 1, "multiply the cases' file sizes (0.1 for a quick run)")
	fs.DurationVar(&f.timeout, "case-timeout", 60*time.Second, "limit for one case")
	fs.IntVar(&f.repeat, "repeat", 1, "run the whole matrix this many times")
	fs.BoolVar(&f.keep, "keep", false, "keep the evidence of passing cases too")
	fs.BoolVar(&f.inVM, "vm", false, "run in the qemu guest (kernel QUIC with $KQUIC_MODULE or --module)")
	fs.BoolVar(&f.allPairs, "all-pairs", false, "with kernel QUIC in the run, run the pairs without it too")
	fs.StringVar(&f.rejudge, "rejudge", "", "give the failures of this results file the verdicts of the known module bugs as listed now, rewrite it and print its matrix")
	fs.StringVar(&f.bModule, "b-module", "", "with --vm: run the cases on this second quic.ko too, in a second guest, and show which cells changed")
	f.vmf.register(cmd)
	return cmd
}

// run runs the cases (in the guest with --vm, on a second module too with
// --b-module), or judges a results file again (--rejudge).
func (f *interopFlags) run(cmd *cobra.Command) error {
	if f.out == "" {
		f.out = filepath.Join("results", "interop-"+time.Now().Format("20060102-150405")+".json")
	}
	if err := os.MkdirAll(filepath.Dir(f.out), 0o755); err != nil {
		return fmt.Errorf("interop: --f.out: %w", err)
	}
	if f.rejudge != "" {
		return interopRejudge(cmd, f.rejudge)
	}
	if f.bModule != "" {
		if !f.inVM {
			return fmt.Errorf("interop: --b-module needs --vm (each build in a guest of its own)")
		}
		return interopAB(cmd, &f.vmf, f.out, f.bModule)
	}
	if f.inVM {
		return f.runInVM(cmd)
	}
	o := interop.Options{Dir: strings.TrimSuffix(f.out, ".json"), Scale: f.scale, Timeout: f.timeout, Progress: cmd.ErrOrStderr(), KeepPassing: f.keep}
	var err error
	if o.Servers, err = openImpls(f.servers); err != nil {
		return err
	}
	if o.Clients, err = openImpls(f.clients); err != nil {
		return err
	}
	for _, n := range matrix.SplitList(f.cases) {
		c, err := interop.CaseNamed(n)
		if err != nil {
			return err
		}
		o.Cases = append(o.Cases, c)
	}
	if len(o.Cases) == 0 {
		o.Cases = interop.Cases
	}
	for _, i := range append(o.Servers, o.Clients...) {
		if interop.OverKernel(i) {
			o.KernelPairs = !f.allPairs
			mod := firstOf(f.vmf.cfg.ModuleFiles)
			if strings.HasPrefix(mod, "src:") {
				// Built here: the file it was built into names it (the
				// guest's command gets that file from --vm).
				mods, err := resolveModules(cmd, f.vmf.k, customKernel(cmd), []string{mod})
				if err != nil {
					return fmt.Errorf("interop: %w", err)
				}
				mod = mods[0]
			}
			o.Module = knownbugs.Builds(mod)
		}
	}
	doc := &interop.Document{Schema: interop.Schema, Started: time.Now()}
	dir := o.Dir
	for i := 0; i < max(1, f.repeat); i++ {
		if f.repeat > 1 {
			// A directory per round: a later round that passes would
			// remove the evidence of an earlier one that failed.
			o.Dir = filepath.Join(dir, fmt.Sprintf("round%d", i+1))
		}
		res, err := interop.Run(cmd.Context(), o)
		doc.Results = append(doc.Results, res...)
		if err != nil {
			return err
		}
	}
	doc.Seconds = time.Since(doc.Started).Seconds()
	if len(o.Module) > 0 {
		doc.Module = strings.Join(o.Module, ", ")
	}
	if err := doc.Save(f.out); err != nil {
		return err
	}
	interop.WriteMatrix(cmd.OutOrStdout(), doc.Results)
	fmt.Fprintln(cmd.OutOrStdout(), "results:", f.out)
	return nil
}

// runInVM runs the command in the guest, its --module sources
// (src:DIR[@REF]) built first and the guest's command given the built file,
// so the results carry the built module's code hash as they do for a .ko.
func (f *interopFlags) runInVM(cmd *cobra.Command) error {
	mods, err := resolveModules(cmd, f.vmf.k, customKernel(cmd), f.vmf.cfg.ModuleFiles)
	if err != nil {
		return fmt.Errorf("interop: %w", err)
	}
	f.vmf.cfg.ModuleFiles = mods
	args, err := guestArgs(cmd, &f.vmf, f.out)
	if err != nil {
		return fmt.Errorf("interop: %w", err)
	}
	args = withModules(args, mods)
	f.vmf.load = append(f.vmf.load, "udp_tunnel", "ip6_udp_tunnel")
	return f.vmf.run(cmd, args)
}

// withModules is args with its --module flags replaced by one per file of
// mods (none if mods is empty).
func withModules(args, mods []string) []string {
	args = dropFlags(args, "--module")
	for _, m := range mods {
		args = append(args, "--module", m)
	}
	return args
}

// openImpls opens the named implementations, or every one that can run
// here, saying why the others cannot.
func openImpls(names []string) ([]interop.Impl, error) {
	all := len(names) == 0
	if all {
		names = interop.ImplNames()
	}
	var out []interop.Impl
	for _, n := range matrix.SplitList(names) {
		i, err := interop.OpenImpl(n)
		if err != nil {
			if all {
				fmt.Fprintf(os.Stderr, "interop: leaving out %s: %v\n", n, err)
				continue
			}
			return nil, err
		}
		out = append(out, i)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("interop: no implementation can run here")
	}
	return out, nil
}
